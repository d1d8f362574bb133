// transpose: out = in^T for a row-major float32 matrix; in is rows x cols.
//
// v1: naive: each thread reads in[y][x] (neighbouring threads, neighbouring
//     addresses: coalesced) and writes out[x][y] (neighbours `rows` floats apart).
// v2: a 32 x 32 tile in shared memory: reads and writes both coalesced, but the
//     transposed read walks a column of the tile, and every float of a column sits
//     in the same shared-memory bank: a 32-way bank conflict.
// v3: the tile padded to 32 x 33: a column's floats fall in 32 different banks.
// The tiled versions need blockDim.x == 32 and blockDim.y dividing 32.

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
