// matrix_add: C = A + B for row-major float32 matrices of M rows and N columns.
//
// v1: a 2-D grid of 2-D blocks; x runs along a row (columns), y down the rows, so the
//     32 threads of a warp touch 32 neighbouring floats.

// --8<-- [start:matrix-add-v1]
extern "C" __global__ void matrix_add_v1(const float* A, const float* B, float* C,
                                         int M, int N) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        int i = row * N + col;  // row-major: rows are N floats apart
        C[i] = A[i] + B[i];
    }
}
// --8<-- [end:matrix-add-v1]
