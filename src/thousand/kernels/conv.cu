// conv: Y = X * K, B11's 2-D convolution (a cross-correlation, as deep learning uses
// the word), NHWC, float32, with stride, padding, dilation and groups
// (conv_geometry.py says what each does). X is N x H x W x C, K is R x S x C/G x F,
// Y is N x P x Q x F:
//     Y[n,p,q,f] = sum over r, s, c of X[n, p st - pad + r dil, q st - pad + s dil,
//                                       g C/G + c] * K[r, s, c, f],   g = f / (F/G)
// with inputs outside the image read as zeros. Per group it is a product of an
// (N P Q) x (R S C/G) patch matrix by an (R S C/G) x F/G slice of K.
//
// v1: direct: one thread per output, a loop over the window (any geometry).
// v2: im2col: the patch matrix written out, one per group (padding as zeros), then
//     B9's GEMM; memory traffic of R S copies of the input, traded for the GEMM.
// v3: implicit GEMM: B9's warp-tiled GEMM (warp_tiled.cuh) whose A operand gathers
//     the patches from X as it loads each tile: the product of v2 without the patch
//     matrix ever existing.
// v4: v3's implicit GEMM on the tensor cores: TF32 mma.sync (mma_tiled.cuh), 128 x 64
//     tiles, operands rounded to TF32 (10-bit mantissa) as they enter shared memory.

#include "conv_shape.cuh"
#include "warp_tiled.cuh"

// --8<-- [start:conv-v1]
extern "C" __global__ void conv_v1(const float* X, const float* K, float* Y,
                                   CONV_ARGS) {
    CONV_SHAPE;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)N * cs.P * cs.Q * F) return;
    int f = i % F;  // i = ((n * P + p) * Q + q) * F + f
    int q = (i / F) % cs.Q, p = (i / F / cs.Q) % cs.P, n = i / F / cs.Q / cs.P;
    int g = f / cs.Fg;  // the group this output channel belongs to
    float acc = 0.0f;
    for (int r = 0; r < R; ++r) {
        int h = p * st - pad + r * dil;
        if (h < 0 || h >= H) continue;  // padding: adds zero
        for (int s = 0; s < S; ++s) {
            int w = q * st - pad + s * dil;
            if (w < 0 || w >= W) continue;
            const float* x = X + (((size_t)n * H + h) * W + w) * C + g * cs.Cg;
            const float* k = K + ((size_t)r * S + s) * cs.Cg * F + f;
            for (int c = 0; c < cs.Cg; ++c) {
                acc += x[c] * k[(size_t)c * F];
            }
        }
    }
    Y[i] = acc;
}
// --8<-- [end:conv-v1]

// --8<-- [start:conv-v2]
// cols[g][(n,p,q)][(r,s,c)]: each group's patch matrix, zeros where a tap falls in
// the padding, group g's starting at g * slab. One thread per element; consecutive
// threads on consecutive c read consecutive floats of X.
extern "C" __global__ void conv_v2(const float* X, float* cols, int slab, CONV_ARGS) {
    CONV_SHAPE;
    long long width = (long long)R * S * cs.Cg;  // one patch
    long long rows = (long long)N * cs.P * cs.Q;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= G * rows * width) return;
    int j = i % width;
    long long row = (i / width) % rows;
    int g = i / width / rows;
    int c = j % cs.Cg, s = (j / cs.Cg) % S, r = j / cs.Cg / S;
    int q = row % cs.Q, p = (row / cs.Q) % cs.P, n = row / cs.Q / cs.P;
    int h = p * st - pad + r * dil, w = q * st - pad + s * dil;
    bool inside = h >= 0 && h < H && w >= 0 && w < W;
    size_t x = (((size_t)n * H + h) * W + w) * C + cs.g0(g) + c;
    cols[g * (size_t)slab + i % (rows * width)] = inside ? X[x] : 0.0f;
}
// --8<-- [end:conv-v2]

// dst[b][a][e] = src[a][b][e], each array's first axis `sa` / `db` floats apart:
// with groups, v2 regroups K's columns (R S C/G x G x F/G -> G slabs) before its
// GEMMs, and their results (G slabs of N P Q x F/G) after.
extern "C" __global__ void conv_swap01(const float* src, float* dst, int A, int B,
                                       int E, int sa, int db) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)A * B * E) return;
    int e = i % E, b = (i / E) % B, a = i / E / B;
    dst[(size_t)b * db + (size_t)a * E + e] = src[(size_t)a * sa + (size_t)b * E + e];
}

// --8<-- [start:patches]
// The patch matrix of group g as an operand of warp_tiled_gemm: row m is the output
// pixel (n, p, q), column k the tap (r, s, c); read from X when asked, never stored.
struct PatchLoad {
    const float* X;
    ConvShape cs;
    int g;
    __device__ float tap(int n, int p, int q, int k) const {
        if (k >= cs.R * cs.S * cs.Cg) return 0.0f;
        int c = k % cs.Cg, rs = k / cs.Cg;
        int h = p * cs.st - cs.pad + rs / cs.S * cs.dil;
        int w = q * cs.st - cs.pad + rs % cs.S * cs.dil;
        if (h < 0 || h >= cs.H || w < 0 || w >= cs.W) return 0.0f;  // padding
        return X[(((size_t)n * cs.H + h) * cs.W + w) * cs.C + cs.g0(g) + c];
    }
    __device__ float4 load4(int m, int k) const {
        if (m >= cs.N * cs.P * cs.Q) return make_float4(0.f, 0.f, 0.f, 0.f);
        int q = m % cs.Q, p = m / cs.Q % cs.P, n = m / cs.Q / cs.P;
        // C/G a multiple of 4: the four taps are four channels of one pixel, and
        // with C a multiple of 4 (and X aligned) one 16-byte load
        if ((cs.Cg & 3) == 0 && aligned(X, cs.C) && k < cs.R * cs.S * cs.Cg) {
            int c = k % cs.Cg, rs = k / cs.Cg;
            int h = p * cs.st - cs.pad + rs / cs.S * cs.dil;
            int w = q * cs.st - cs.pad + rs % cs.S * cs.dil;
            if (h < 0 || h >= cs.H || w < 0 || w >= cs.W)
                return make_float4(0.f, 0.f, 0.f, 0.f);
            const float* x = X + (((size_t)n * cs.H + h) * cs.W + w) * cs.C;
            return *reinterpret_cast<const float4*>(x + cs.g0(g) + c);
        }
        return make_float4(tap(n, p, q, k), tap(n, p, q, k + 1), tap(n, p, q, k + 2),
                           tap(n, p, q, k + 3));
    }
};
// --8<-- [end:patches]

// --8<-- [start:conv-v3]
// 128 x 64 output tiles (output pixels x channels of one group: blockIdx.z), 4
// warps of 64 x 32, 8 x 8 outputs a thread; the GEMM's k runs over R S C/G taps.
extern "C" __global__ void __launch_bounds__(128)
    conv_v3(const float* X, const float* K, float* Y, CONV_ARGS) {
    CONV_SHAPE;
    int g = blockIdx.z, M = N * cs.P * cs.Q, taps = R * S * cs.Cg;
    warp_tiled_gemm<128, 64, 16, 64, 32, 8, 4, 2, true, true>(
        PatchLoad{X, cs, g}, MatrixLoad{K + g * cs.Fg, taps, cs.Fg, F},
        MatrixStore{Y + g * cs.Fg, M, cs.Fg, F}, 0, taps);
}
// --8<-- [end:conv-v3]

#ifndef THOUSAND_ON_CPU  // tensor cores and inline PTX: nothing the CPU can emulate
#include "mma_tiled.cuh"

// --8<-- [start:conv-v4]
extern "C" __global__ void __launch_bounds__(128)
    conv_v4(const float* X, const float* K, float* Y, CONV_ARGS) {
#if __CUDA_ARCH__ >= 800  // TF32 mma.sync: Ampere and later
    CONV_SHAPE;
    int g = blockIdx.z, M = N * cs.P * cs.Q, taps = R * S * cs.Cg;
    mma_tiled_gemm<128, 64, 16, 2, 2>(PatchLoad{X, cs, g},
                                      MatrixLoad{K + g * cs.Fg, taps, cs.Fg, F},
                                      MatrixStore{Y + g * cs.Fg, M, cs.Fg, F}, 0, taps);
#else
    __trap();  // the launcher refuses older GPUs before it gets here
#endif
}
// --8<-- [end:conv-v4]

#endif  // THOUSAND_ON_CPU
