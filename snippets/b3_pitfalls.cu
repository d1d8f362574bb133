// Kernels for B3's pitfalls: each is wrong on purpose, in one way.

// --8<-- [start:swapped]
// The grid was sized with x across the columns, but this kernel takes x as the row.
extern "C" __global__ void swapped_xy(int* out, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;  // wrong: x is the column
    int col = blockIdx.y * blockDim.y + threadIdx.y;  // wrong: y is the row
    if (row < rows && col < cols) {
        out[row * cols + col] = 1;
    }
}
// --8<-- [end:swapped]

// --8<-- [start:no-bounds-check]
// One thread per element, and no `if (i < n)`: the last block runs past the end.
extern "C" __global__ void no_bounds_check(int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = i;  // n is never looked at
}
// --8<-- [end:no-bounds-check]

// --8<-- [start:index-overflow]
// The global index of thread t of block b[k] (blocks of dim threads), computed the
// way `blockIdx.x * blockDim.x + threadIdx.x` computes it: all three are unsigned
// int, so the product is taken modulo 2^32, then squeezed into an int.
extern "C" __global__ void flat_index(const unsigned* b, unsigned dim, unsigned t,
                                      long long* as_int, long long* as_64, int n) {
    int k = threadIdx.x;
    if (k < n) {
        int i = b[k] * dim + t;                   // 32-bit unsigned product, then int
        long long j = (long long)b[k] * dim + t;  // widened first: exact
        as_int[k] = i;
        as_64[k] = j;
    }
}
// --8<-- [end:index-overflow]
