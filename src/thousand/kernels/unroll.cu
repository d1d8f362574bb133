// unroll: out[j] = x[0][j] + x[1][j] + ... + x[K-1][j] for a row-major K x n matrix
// of float32 (the gradient of a bias is such a sum, over the batch). Each thread sums
// one column: K loads n floats apart, one add per load. The loop is memory-bound, and
// its speed is set by how many loads each thread has in flight at once.
//
// v1: a loop the compiler must keep (`#pragma unroll 1`), K a runtime argument. The
//     add waits for its load, and the next load is issued only after that add:
//     one load in flight per thread.
// v2: K a compile-time constant (UNROLL_K) and `#pragma unroll`: no loop is left,
//     the UNROLL_K loads are issued back to back, then the adds.
// v3: unrolled by hand, 4 rows per trip into 4 accumulators, K a runtime argument,
//     a remainder loop for the last K % 4 rows. Four loads in flight, and four
//     independent chains of adds: the sum is grouped differently, so it rounds
//     differently from v1.
// v4: a template on K: one instance per K in {1, 2, 4, 8, 16, 32}, each fully
//     unrolled; the kernel (one extern "C" name, which the launcher looks up) picks
//     the instance for the runtime K, the same for every thread, and falls back to
//     a plain loop for any other K.

#define UNROLL_K 16  // v2's trip count: the rows of its matrix

// --8<-- [start:unroll-v1]
extern "C" __global__ void unroll_v1(const float* x, float* out, int n, int k) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;  // the column this thread sums
    if (j >= n) {
        return;
    }
    float acc = 0.0f;
#pragma unroll 1  // keep the loop: one trip, one load, one add
    for (int r = 0; r < k; ++r) {
        acc += x[(size_t)r * n + j];
    }
    out[j] = acc;
}
// --8<-- [end:unroll-v1]

// --8<-- [start:unroll-v2]
extern "C" __global__ void unroll_v2(const float* x, float* out, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) {
        return;
    }
    float acc = 0.0f;
#pragma unroll  // UNROLL_K is known here: the loop becomes UNROLL_K copies
    for (int r = 0; r < UNROLL_K; ++r) {
        acc += x[(size_t)r * n + j];
    }
    out[j] = acc;
}
// --8<-- [end:unroll-v2]

// --8<-- [start:unroll-v3]
extern "C" __global__ void unroll_v3(const float* x, float* out, int n, int k) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) {
        return;
    }
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;  // four independent chains
    int r = 0;
#pragma unroll 1  // our unrolling only: the compiler adds none on top of it
    for (; r + 4 <= k; r += 4) {
        a0 += x[(size_t)r * n + j];
        a1 += x[(size_t)(r + 1) * n + j];
        a2 += x[(size_t)(r + 2) * n + j];
        a3 += x[(size_t)(r + 3) * n + j];
    }
#pragma unroll 1
    for (; r < k; ++r) {  // the remainder: the last k % 4 rows
        a0 += x[(size_t)r * n + j];
    }
    out[j] = (a0 + a1) + (a2 + a3);
}
// --8<-- [end:unroll-v3]

// --8<-- [start:unroll-v4]
template <int K>  // K is a constant in each instance: `#pragma unroll` removes the loop
__device__ __forceinline__ float column_sum(const float* x, int n, int j) {
    float acc = 0.0f;
#pragma unroll
    for (int r = 0; r < K; ++r) {
        acc += x[(size_t)r * n + j];
    }
    return acc;
}

extern "C" __global__ void unroll_v4(const float* x, float* out, int n, int k) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) {
        return;
    }
    float acc;
    switch (k) {  // k is the same in every thread: no divergence, one branch
        case 1: acc = column_sum<1>(x, n, j); break;
        case 2: acc = column_sum<2>(x, n, j); break;
        case 4: acc = column_sum<4>(x, n, j); break;
        case 8: acc = column_sum<8>(x, n, j); break;
        case 16: acc = column_sum<16>(x, n, j); break;
        case 32: acc = column_sum<32>(x, n, j); break;
        default:  // any other K: a loop, as in v1
            acc = 0.0f;
#pragma unroll 1
            for (int r = 0; r < k; ++r) {
                acc += x[(size_t)r * n + j];
            }
    }
    out[j] = acc;
}
// --8<-- [end:unroll-v4]
