// Kernels for the pitfalls of the loop-unrolling article (B8), printed and run by
// b8_pitfalls.py. Not a kernel family: each one is wasteful or wrong on purpose.
// All of them sum the columns of a row-major k x n matrix, like unroll.cu.

// --8<-- [start:runtime-pragma]
// k arrives at run time, so `#pragma unroll` cannot remove this loop. nvcc accepts
// the pragma without a word; what it does instead shows only in the SASS.
extern "C" __global__ void sum_pragma_unroll(const float* x, float* out, int n, int k) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) {
        return;
    }
    float acc = 0.0f;
#pragma unroll
    for (int r = 0; r < k; ++r) {
        acc += x[(size_t)r * n + j];
    }
    out[j] = acc;
}

// The same loop with no pragma at all: the compiler's own choice.
extern "C" __global__ void sum_no_pragma(const float* x, float* out, int n, int k) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) {
        return;
    }
    float acc = 0.0f;
    for (int r = 0; r < k; ++r) {
        acc += x[(size_t)r * n + j];
    }
    out[j] = acc;
}
// --8<-- [end:runtime-pragma]

// --8<-- [start:no-remainder]
// Unrolled by 4 by hand, and wrong: when 4 does not divide k, the last k % 4 rows
// are never added. Nothing faults and nothing warns.
extern "C" __global__ void sum_by4_no_remainder(const float* x, float* out, int n,
                                                int k) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) {
        return;
    }
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    for (int r = 0; r + 4 <= k; r += 4) {
        a0 += x[(size_t)r * n + j];
        a1 += x[(size_t)(r + 1) * n + j];
        a2 += x[(size_t)(r + 2) * n + j];
        a3 += x[(size_t)(r + 3) * n + j];
    }
    out[j] = (a0 + a1) + (a2 + a3);  // the remainder loop of unroll_v3 is missing
}
// --8<-- [end:no-remainder]

// --8<-- [start:spill]
// C neighbouring columns per thread, so C accumulators. acc[] stays in registers
// only because every loop over c is unrolled (each acc[c] then has a fixed name);
// the price is C registers for the sums alone, and more for the loads in flight.
template <int C>
__device__ __forceinline__ void columns(const float* x, float* out, int n, int k) {
    int j = (blockIdx.x * blockDim.x + threadIdx.x) * C;
    if (j + C > n) {
        return;  // whole groups of C columns only: this kernel is about registers
    }
    float acc[C];
#pragma unroll
    for (int c = 0; c < C; ++c) {
        acc[c] = 0.0f;
    }
    for (int r = 0; r < k; ++r) {
#pragma unroll
        for (int c = 0; c < C; ++c) {
            acc[c] += x[(size_t)r * n + j + c];
        }
    }
#pragma unroll
    for (int c = 0; c < C; ++c) {
        out[j + c] = acc[c];
    }
}

extern "C" __global__ void columns_32(const float* x, float* out, int n, int k) {
    columns<32>(x, out, n, k);
}
extern "C" __global__ void columns_64(const float* x, float* out, int n, int k) {
    columns<64>(x, out, n, k);
}
extern "C" __global__ void columns_128(const float* x, float* out, int n, int k) {
    columns<128>(x, out, n, k);
}
extern "C" __global__ void columns_256(const float* x, float* out, int n, int k) {
    columns<256>(x, out, n, k);
}
// --8<-- [end:spill]
