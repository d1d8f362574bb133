// transpose: out = in^T for a row-major float32 matrix; in is rows x cols.
//
// v1: naive: each thread reads in[y][x] (neighbouring threads, neighbouring
//     addresses: coalesced) and writes out[x][y] (neighbours `rows` floats apart).
// v2: a 32 x 32 tile in shared memory: reads and writes both coalesced, but the
//     transposed read walks a column of the tile, and every float of a column sits
//     in the same shared-memory bank: a 32-way bank conflict.
// v3: the tile padded to 32 x 33: a column's floats fall in 32 different banks.
// v4: v3 with the rows per thread fixed at compile time (blocks of 32 x 8): the
//     four loads of a thread are all issued before the first one is stored, so
//     four times as many bytes are in flight per thread.
// v2 and v3 need blockDim.x == 32 and blockDim.y dividing 32; v4 needs 32 x 8.

#define TILE 32

// --8<-- [start:transpose-v1]
extern "C" __global__ void transpose_v1(const float* in, float* out, int rows,
                                        int cols) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;  // column of `in`
    int y = blockIdx.y * blockDim.y + threadIdx.y;  // row of `in`
    if (y < rows && x < cols) {
        out[x * rows + y] = in[y * cols + x];
    }
}
// --8<-- [end:transpose-v1]

// --8<-- [start:transpose-v2]
extern "C" __global__ void transpose_v2(const float* in, float* out, int rows,
                                        int cols) {
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    for (int dy = threadIdx.y; dy < TILE; dy += blockDim.y) {  // coalesced reads
        int y = blockIdx.y * TILE + dy;
        if (y < rows && x < cols) {
            tile[dy][threadIdx.x] = in[y * cols + x];
        }
    }
    __syncthreads();
    int ox = blockIdx.y * TILE + threadIdx.x;  // column of `out` = row of `in`
    for (int dy = threadIdx.y; dy < TILE; dy += blockDim.y) {  // coalesced writes
        int oy = blockIdx.x * TILE + dy;  // row of `out` = column of `in`
        if (oy < cols && ox < rows) {
            out[oy * rows + ox] = tile[threadIdx.x][dy];  // a column: one bank
        }
    }
}
// --8<-- [end:transpose-v2]

// --8<-- [start:transpose-v3]
extern "C" __global__ void transpose_v3(const float* in, float* out, int rows,
                                        int cols) {
    __shared__ float tile[TILE][TILE + 1];  // the extra column shifts each row a bank
    int x = blockIdx.x * TILE + threadIdx.x;
    for (int dy = threadIdx.y; dy < TILE; dy += blockDim.y) {
        int y = blockIdx.y * TILE + dy;
        if (y < rows && x < cols) {
            tile[dy][threadIdx.x] = in[y * cols + x];
        }
    }
    __syncthreads();
    int ox = blockIdx.y * TILE + threadIdx.x;
    for (int dy = threadIdx.y; dy < TILE; dy += blockDim.y) {
        int oy = blockIdx.x * TILE + dy;
        if (oy < cols && ox < rows) {
            out[oy * rows + ox] = tile[threadIdx.x][dy];  // 32 banks: no conflict
        }
    }
}
// --8<-- [end:transpose-v3]

// --8<-- [start:transpose-v4]
#define ROWS 8  // blockDim.y of v4: each thread moves TILE / ROWS = 4 elements

extern "C" __global__ void transpose_v4(const float* in, float* out, int rows,
                                        int cols) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    float v[TILE / ROWS];
    // v3's loop runs to a bound known only at run time (blockDim.y), so each load
    // waits for the store before it. Here the trip count is a constant: the loop
    // unrolls and all four loads are in flight together.
#pragma unroll
    for (int k = 0; k < TILE / ROWS; ++k) {
        int y = blockIdx.y * TILE + threadIdx.y + k * ROWS;
        v[k] = (y < rows && x < cols) ? __ldg(&in[y * cols + x]) : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < TILE / ROWS; ++k) {
        tile[threadIdx.y + k * ROWS][threadIdx.x] = v[k];
    }
    __syncthreads();
    int ox = blockIdx.y * TILE + threadIdx.x;
#pragma unroll
    for (int k = 0; k < TILE / ROWS; ++k) {
        int oy = blockIdx.x * TILE + threadIdx.y + k * ROWS;
        if (oy < cols && ox < rows) {
            out[oy * rows + ox] = tile[threadIdx.x][threadIdx.y + k * ROWS];
        }
    }
}
// --8<-- [end:transpose-v4]
