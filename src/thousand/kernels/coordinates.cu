// coordinates: for each element of a (depth, height, width) array, which block and
// which thread of the launch wrote it. out is int32, shape (6, depth, height, width):
// one plane each for blockIdx.x, .y, .z and threadIdx.x, .y, .z. Each version finds
// its element its own way; the built-ins it stores are the launch's own.
//
// v1: a 1-D grid of 1-D blocks over the array read as one flat row of n elements.
// v2: a 2-D grid of 2-D blocks: x across the width, y down depth * height rows.
//     Row-major, a (d, h, w) array is a (d * h, w) matrix, so no loop over z and
//     every thread has exactly one element; the price is that gridDim.y (at most
//     65535) must cover d * h / blockDim.y, which the launcher checks.
// v3: a 3-D grid of 3-D blocks (dim3 on both sides): x, y, z over width, height,
//     depth, the index linearised row-major.
//
// Six planes rather than six ints side by side: a warp's store then fills 32
// consecutive ints of one plane (coalesced). Offsets up to 6 * n stay int: the
// launcher refuses arrays where 6 * n would not fit.

// --8<-- [start:record]
// Element i of an n-element array was written by this block and this thread.
__device__ __forceinline__ void record(int* out, int n, int i) {
    out[i] = blockIdx.x;
    out[n + i] = blockIdx.y;
    out[2 * n + i] = blockIdx.z;
    out[3 * n + i] = threadIdx.x;
    out[4 * n + i] = threadIdx.y;
    out[5 * n + i] = threadIdx.z;
}
// --8<-- [end:record]

// --8<-- [start:coordinates-v1]
extern "C" __global__ void coordinates_v1(int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // blocks side by side along x
    if (i < n) {  // the last block may run past the end
        record(out, n, i);
    }
}
// --8<-- [end:coordinates-v1]

// --8<-- [start:coordinates-v2]
extern "C" __global__ void coordinates_v2(int* out, int rows, int width) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;  // x: fastest-varying, a column
    int row = blockIdx.y * blockDim.y + threadIdx.y;  // y: a row of (d * h, w)
    if (row < rows && col < width) {
        record(out, rows * width, row * width + col);
    }
}
// --8<-- [end:coordinates-v2]

// --8<-- [start:coordinates-v3]
extern "C" __global__ void coordinates_v3(int* out, int depth, int height, int width) {
    const uint3 b = blockIdx, t = threadIdx;  // uint3: which block, which thread
    const dim3 size = blockDim;               // dim3: the block's shape
    int x = b.x * size.x + t.x;
    int y = b.y * size.y + t.y;
    int z = b.z * size.z + t.z;
    if (x < width && y < height && z < depth) {
        record(out, depth * height * width, (z * height + y) * width + x);
    }
}
// --8<-- [end:coordinates-v3]
