// conv_backward_data: dX = dL/dX of Y = conv(X, K) (conv.cu, any geometry), from
// dY = dL/dY and K. Input pixel h received, through tap r, from output row p
// exactly when h = p st - pad + r dil, so
//     dX[n,h,w,g C/G + c] = sum over r, s, f of
//                               dY[n, p, q, g F/G + f] K[r, s, c, g F/G + f]
//         with p = (h + pad - r dil) / st, q = (w + pad - s dil) / st
// over the taps where that division is exact and lands inside dY. It is a
// convolution of dY with K flipped (r -> -r) and its channels swapped (c <-> f):
// the transposed convolution. Per group, a product of an (N H W) x (R S F/G) matrix
// of dY's taps by an (R S F/G) x C/G matrix of K.
//
// v1: direct: one thread per input gradient, a loop over the taps that reach it.
// v2: implicit GEMM on warp_tiled.cuh's tiling, as conv_v3: A gathers dY's taps,
//     B is K with each group's (c, f) swapped, rearranged once by
//     conv_backward_data_filter (R S C/G F floats: small beside the images).

#include "conv_shape.cuh"
#include "warp_tiled.cuh"

// The output row p whose tap r lands on input row h, or -1 if none does.
__device__ __forceinline__ int source_row(int h, int r, int st, int pad, int dil,
                                          int P) {
    int t = h + pad - r * dil;
    if (t < 0 || t % st) return -1;
    return t / st < P ? t / st : -1;
}

// --8<-- [start:conv-backward-data-v1]
extern "C" __global__ void conv_backward_data_v1(const float* dY, const float* K,
                                                 float* dX, CONV_ARGS) {
    CONV_SHAPE;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)N * H * W * C) return;
    int c = i % C, w = (i / C) % W, h = (i / C / W) % H, n = i / C / W / H;
    int g = c / cs.Cg, cg = c % cs.Cg;
    float acc = 0.0f;
    for (int r = 0; r < R; ++r) {
        int p = source_row(h, r, st, pad, dil, cs.P);
        if (p < 0) continue;
        for (int s = 0; s < S; ++s) {
            int q = source_row(w, s, st, pad, dil, cs.Q);
            if (q < 0) continue;
            const float* dy = dY + (((size_t)n * cs.P + p) * cs.Q + q) * F + g * cs.Fg;
            const float* k = K + (((size_t)r * S + s) * cs.Cg + cg) * F + g * cs.Fg;
            for (int f = 0; f < cs.Fg; ++f) {
                acc += dy[f] * k[f];
            }
        }
    }
    dX[i] = acc;
}
// --8<-- [end:conv-backward-data-v1]

// Kt[g][(r, s, f)][c] = K[r, s, c, g F/G + f]: B of v2's GEMM, row-major per group.
extern "C" __global__ void conv_backward_data_filter(const float* K, float* Kt,
                                                     CONV_ARGS) {
    CONV_SHAPE;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)R * S * cs.Cg * F) return;
    int f = i % F, c = (i / F) % cs.Cg, rs = i / F / cs.Cg;  // K's own order
    int g = f / cs.Fg, fg = f % cs.Fg;
    Kt[(((size_t)g * R * S + rs) * cs.Fg + fg) * cs.Cg + c] = K[i];
}

// --8<-- [start:conv-backward-data-v2]
// A of the GEMM for group g: row m the input pixel (n, h, w), column k the tap
// (r, s, f) of dY that reaches it, zero where none does.
struct SourceLoad {
    const float* dY;
    ConvShape cs;
    int g;
    __device__ float tap(int n, int h, int w, int k) const {
        if (k >= cs.R * cs.S * cs.Fg) return 0.0f;
        int f = k % cs.Fg, rs = k / cs.Fg;
        int p = source_row(h, rs / cs.S, cs.st, cs.pad, cs.dil, cs.P);
        int q = source_row(w, rs % cs.S, cs.st, cs.pad, cs.dil, cs.Q);
        if (p < 0 || q < 0) return 0.0f;
        return dY[(((size_t)n * cs.P + p) * cs.Q + q) * cs.F + g * cs.Fg + f];
    }
    __device__ float4 load4(int m, int k) const {
        if (m >= cs.N * cs.H * cs.W) return make_float4(0.f, 0.f, 0.f, 0.f);
        int w = m % cs.W, h = m / cs.W % cs.H, n = m / cs.W / cs.H;
        if ((cs.Fg & 3) == 0 && aligned(dY, cs.F) && k < cs.R * cs.S * cs.Fg) {
            int f = k % cs.Fg, rs = k / cs.Fg;  // four channels of one tap
            int p = source_row(h, rs / cs.S, cs.st, cs.pad, cs.dil, cs.P);
            int q = source_row(w, rs % cs.S, cs.st, cs.pad, cs.dil, cs.Q);
            if (p < 0 || q < 0) return make_float4(0.f, 0.f, 0.f, 0.f);
            const float* d = dY + (((size_t)n * cs.P + p) * cs.Q + q) * cs.F;
            return *reinterpret_cast<const float4*>(d + g * cs.Fg + f);
        }
        return make_float4(tap(n, h, w, k), tap(n, h, w, k + 1), tap(n, h, w, k + 2),
                           tap(n, h, w, k + 3));
    }
};

extern "C" __global__ void __launch_bounds__(128)
    conv_backward_data_v2(const float* dY, const float* Kt, float* dX, CONV_ARGS) {
    CONV_SHAPE;
    int g = blockIdx.z, M = N * H * W, taps = R * S * cs.Fg;
    warp_tiled_gemm<128, 64, 16, 64, 32, 8, 4, 2, true, true>(
        SourceLoad{dY, cs, g},
        MatrixLoad{Kt + (size_t)g * taps * cs.Cg, taps, cs.Cg, cs.Cg},
        MatrixStore{dX + g * cs.Cg, M, cs.Cg, C}, 0, taps);
}
// --8<-- [end:conv-backward-data-v2]
