// conv_backward_filter: dK = dL/dK of Y = conv(X, K) (conv.cu, any geometry), from
// X and dY = dL/dY. Every weight touched every output pixel of every image:
//     dK[r,s,c,f] = sum over n, p, q of X[n, p st - pad + r dil, q st - pad + s dil,
//                                         g C/G + c] dY[n, p, q, f],   g = f / (F/G)
// Per group a product of the transposed patch matrix, (R S C/G) x (N P Q), by dY's
// (N P Q) x F/G columns: a small output (a 3 x 3 x 64 x 64 layer has 36,864
// weights) and a long sum (N P Q = 100,352 terms at 32 x 56 x 56).
//
// v1: direct: one thread per weight, a loop over all N P Q output pixels: only
//     R S C/G F threads, each with the whole sum to itself.
// v2: split-K implicit GEMM: the sum over pixels cut into `splits` slices, one
//     grid layer each (warp_tiled.cuh's tiling with the patches gathered from X);
//     each slice writes its partial dK, and conv_backward_filter_sum adds the
//     slices in a fixed order, so the result does not depend on timing (atomics
//     would make it vary from run to run in the last bits).

#include "conv_shape.cuh"
#include "warp_tiled.cuh"

// --8<-- [start:conv-backward-filter-v1]
extern "C" __global__ void conv_backward_filter_v1(const float* X, const float* dY,
                                                   float* dK, CONV_ARGS) {
    CONV_SHAPE;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)R * S * cs.Cg * F) return;
    int f = i % F, c = (i / F) % cs.Cg, s = (i / F / cs.Cg) % S, r = i / F / cs.Cg / S;
    const float* x = X + cs.g0(f / cs.Fg) + c;  // this weight's input channel
    float acc = 0.0f;
    for (int n = 0; n < N; ++n) {
        for (int p = 0; p < cs.P; ++p) {
            int h = p * st - pad + r * dil;
            if (h < 0 || h >= H) continue;  // a tap in the padding: adds zero
            for (int q = 0; q < cs.Q; ++q) {
                int w = q * st - pad + s * dil;
                if (w < 0 || w >= W) continue;
                acc += x[(((size_t)n * H + h) * W + w) * C] *
                       dY[(((size_t)n * cs.P + p) * cs.Q + q) * F + f];
            }
        }
    }
    dK[i] = acc;
}
// --8<-- [end:conv-backward-filter-v1]

// --8<-- [start:conv-backward-filter-v2]
// A of the GEMM for group g: row m the tap (r, s, c), column k the output pixel
// (n, p, q): the patch matrix read transposed, straight from X, four taps of one
// pixel at a time.
struct TapLoad {
    const float* X;
    ConvShape cs;
    int g;
    __device__ float at(int m, int k) const {
        if (m >= cs.R * cs.S * cs.Cg || k >= cs.N * cs.P * cs.Q) return 0.0f;
        int c = m % cs.Cg, s = m / cs.Cg % cs.S, r = m / cs.Cg / cs.S;
        int q = k % cs.Q, p = k / cs.Q % cs.P, n = k / cs.Q / cs.P;
        int h = p * cs.st - cs.pad + r * cs.dil, w = q * cs.st - cs.pad + s * cs.dil;
        if (h < 0 || h >= cs.H || w < 0 || w >= cs.W) return 0.0f;
        return X[(((size_t)n * cs.H + h) * cs.W + w) * cs.C + cs.g0(g) + c];
    }
    // A[m..m+3][k]: four taps at one pixel (warp_tiled_gemm's A_KMAJOR). With C/G a
    // multiple of 4 they are four neighbouring channels: one 16-byte load, and
    // neighbouring threads take the neighbouring channels.
    __device__ float4 load4(int m, int k) const {
        int taps = cs.R * cs.S * cs.Cg;
        if ((cs.Cg & 3) == 0 && aligned(X, cs.C) && m < taps) {
            if (k >= cs.N * cs.P * cs.Q) return make_float4(0.f, 0.f, 0.f, 0.f);
            int c = m % cs.Cg, s = m / cs.Cg % cs.S, r = m / cs.Cg / cs.S;
            int q = k % cs.Q, p = k / cs.Q % cs.P, n = k / cs.Q / cs.P;
            int h = p * cs.st - cs.pad + r * cs.dil,
                w = q * cs.st - cs.pad + s * cs.dil;
            if (h < 0 || h >= cs.H || w < 0 || w >= cs.W)
                return make_float4(0.f, 0.f, 0.f, 0.f);
            const float* x = X + (((size_t)n * cs.H + h) * cs.W + w) * cs.C;
            return *reinterpret_cast<const float4*>(x + cs.g0(g) + c);
        }
        return make_float4(at(m, k), at(m + 1, k), at(m + 2, k), at(m + 3, k));
    }
};

// blockIdx.z = slice * G + g; the slice sums pixels [z0, z0 + chunk) into its own
// R S C/G x F layer of `partial`.
extern "C" __global__ void __launch_bounds__(128)
    conv_backward_filter_v2(const float* X, const float* dY, float* partial, int chunk,
                            CONV_ARGS) {
    CONV_SHAPE;
    int g = blockIdx.z % G, slice = blockIdx.z / G;
    int taps = R * S * cs.Cg, pixels = N * cs.P * cs.Q;
    int k0 = slice * chunk, k1 = min(k0 + chunk, pixels);
    warp_tiled_gemm<128, 64, 16, 64, 32, 8, 4, 2, true, true, true>(
        TapLoad{X, cs, g}, MatrixLoad{dY + g * cs.Fg, pixels, cs.Fg, F},
        MatrixStore{partial + (size_t)slice * taps * F + g * cs.Fg, taps, cs.Fg, F}, k0,
        k1);
}

// dK = the sum of the slices, in slice order.
extern "C" __global__ void conv_backward_filter_sum(const float* partial, float* dK,
                                                    int size, int splits) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= size) return;
    float acc = 0.0f;
    for (int z = 0; z < splits; ++z)
        acc += partial[(size_t)z * size + i];
    dK[i] = acc;
}
// --8<-- [end:conv-backward-filter-v2]
