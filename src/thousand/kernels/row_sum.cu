// row_sum: out[i] = a[i][0] + a[i][1] + ... + a[i][cols-1] for a rows x cols float32
// matrix. The same sums three times; what changes is how the threads meet the layout.
//
// v1: one thread per row, the matrix row-major (C order). Thread i walks row i, so
//     at every step the 32 threads of a warp read addresses `cols` floats apart:
//     32 separate memory transactions per load instruction, uncoalesced.
// v2: one thread per row, the matrix column-major (Fortran order: the buffer holds
//     the transpose, row after row). At every step a warp reads 32 neighbouring
//     floats: one 128-byte transaction, coalesced.
// v3: one warp per row, the matrix row-major again. The 32 lanes read neighbouring
//     floats of the same row, then add their 32 partial sums with warp shuffles:
//     coalesced without changing the layout. Needs blocks of whole warps.

// --8<-- [start:row-sum-v1]
extern "C" __global__ void row_sum_v1(const float* a, float* out, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // this thread's row
    if (i < rows) {
        float s = 0.0f;
        for (int k = 0; k < cols; ++k) {
            s += a[i * cols + k];  // lane i + 1 reads `cols` floats further on
        }
        out[i] = s;
    }
}
// --8<-- [end:row-sum-v1]

// --8<-- [start:row-sum-v2]
extern "C" __global__ void row_sum_v2(const float* a_cm, float* out, int rows,
                                      int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // this thread's row
    if (i < rows) {
        float s = 0.0f;
        for (int k = 0; k < cols; ++k) {
            s += a_cm[k * rows + i];  // element (i, k); lane i + 1 reads the next float
        }
        out[i] = s;
    }
}
// --8<-- [end:row-sum-v2]

// --8<-- [start:row-sum-v3]
extern "C" __global__ void row_sum_v3(const float* a, float* out, int rows, int cols) {
    int lane = threadIdx.x % 32;
    int i = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;  // this warp's row
    if (i >= rows) return;  // whole warps leave together: the shuffles stay full
    const float* row = a + i * cols;
    float s = 0.0f;
    for (int k = lane; k < cols; k += 32) {  // lanes 0..31 read 32 neighbouring floats
        s += row[k];
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        s += __shfl_down_sync(0xffffffffu, s, offset);
    }
    if (lane == 0) {
        out[i] = s;
    }
}
// --8<-- [end:row-sum-v3]
