// layer_norm: y = (x - mean) / sqrt(var + eps) * gamma + beta over each row of x
// (rows x C, float32), mean and var the row's mean and biased variance (as
// torch.nn.functional.layer_norm), gamma and beta C values shared by every row. The
// kernels also write mean[r] and rstd[r] = 1 / sqrt(var + eps): the backward pass
// (layer_norm_backward.cu) needs them. One block per row: its threads stride along
// the row (coalesced), then meet in a block reduction: warp shuffles, then one value
// per warp through shared memory. Blocks of whole warps.
//
// v1: two passes for the statistics: the mean, then the mean of squared deviations
//     from it. Exact to float32 rounding, but the row is read three times (mean,
//     variance, y); the second and third reads come from cache if it holds the row.
// v2: one pass: the sum and the sum of squares, var = E[x^2] - E[x]^2. One read
//     fewer, but when |mean| >> std the two terms nearly cancel: at 1e4 + N(0, 1)
//     E[x^2] is 1e8, float32 keeps it to ~4, and the variance of ~1 is lost.
// v3: one pass and stable: Welford's update per thread, Chan et al.'s combination
//     of (count, mean, M2) across the warp and the block. 16-byte loads when C is a
//     multiple of 4, and the thread keeps its 16 floats in registers (rows of up to
//     16 * block floats: 4,096 with 256 threads), so y is computed without reading
//     x again: x crosses DRAM once. Longer rows are read again for y.
// v4: v1's two exact passes over the registers v3 fills: a block sum for the mean,
//     then one of the squared deviations. No division per element (Welford's
//     update has one), no cancellation, x read once: on the H200 v3 reached 0.89x
//     torch's layer_norm, its per-element division the suspected cost.

#include "block_sum.cuh"

// --8<-- [start:layer-norm-v1]
extern "C" __global__ void layer_norm_v1(const float* x, const float* gamma,
                                         const float* beta, float* y, float* mean,
                                         float* rstd, int rows, int C, float eps) {
    __shared__ float s[32];
    int r = blockIdx.x;  // this block's row
    const float* xr = x + (size_t)r * C;
    float* yr = y + (size_t)r * C;
    float sum = 0.0f;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        sum += xr[c];
    }
    float mu = block_sum(sum, s) / C;
    float sq = 0.0f;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {  // the row again
        float d = xr[c] - mu;
        sq += d * d;  // squares of deviations: no large terms to cancel
    }
    float rs = rsqrtf(block_sum(sq, s) / C + eps);
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        yr[c] = (xr[c] - mu) * rs * gamma[c] + beta[c];
    }
    if (threadIdx.x == 0) {
        mean[r] = mu;
        rstd[r] = rs;
    }
}
// --8<-- [end:layer-norm-v1]

// --8<-- [start:layer-norm-v2]
extern "C" __global__ void layer_norm_v2(const float* x, const float* gamma,
                                         const float* beta, float* y, float* mean,
                                         float* rstd, int rows, int C, float eps) {
    __shared__ float s[32];
    int r = blockIdx.x;
    const float* xr = x + (size_t)r * C;
    float* yr = y + (size_t)r * C;
    float sum = 0.0f, sumsq = 0.0f;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        float v = xr[c];
        sum += v;
        sumsq += v * v;
    }
    float mu = block_sum(sum, s) / C;
    float msq = block_sum(sumsq, s) / C;
    // E[x^2] - E[x]^2: two large numbers whose difference is small when the row sits
    // far from 0; rounding can even leave it below 0, which rsqrtf would turn to NaN
    float var = fmaxf(msq - mu * mu, 0.0f);
    float rs = rsqrtf(var + eps);
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        yr[c] = (xr[c] - mu) * rs * gamma[c] + beta[c];
    }
    if (threadIdx.x == 0) {
        mean[r] = mu;
        rstd[r] = rs;
    }
}
// --8<-- [end:layer-norm-v2]

// --8<-- [start:welford]
// n values, their mean, and M2 = the sum of squared deviations from that mean.
struct Welford {
    float n, mean, m2;
};

// Welford (1962): add one value; mean and M2 move by small steps, nothing cancels.
__device__ __forceinline__ void welford_add(Welford& w, float v) {
    w.n += 1.0f;
    float d = v - w.mean;
    w.mean += d / w.n;
    w.m2 += d * (v - w.mean);  // the distances to the old and the new mean
}

// Chan, Golub and LeVeque (1979): the statistics of two sets, from each set's.
__device__ __forceinline__ Welford welford_combine(Welford a, Welford b) {
    float n = a.n + b.n;
    if (n == 0.0f) {
        return a;  // two empty sets: threads past the end of a short row
    }
    float d = b.mean - a.mean, fb = b.n / n;
    return {n, a.mean + d * fb, a.m2 + b.m2 + d * d * a.n * fb};
}

__device__ __forceinline__ Welford warp_welford(Welford w) {
    for (int o = 16; o > 0; o /= 2) {
        Welford other = {__shfl_xor_sync(0xffffffffu, w.n, o),
                         __shfl_xor_sync(0xffffffffu, w.mean, o),
                         __shfl_xor_sync(0xffffffffu, w.m2, o)};
        w = welford_combine(w, other);
    }
    // combine(a, b) and combine(b, a) may round apart: every lane takes lane 0's
    return {__shfl_sync(0xffffffffu, w.n, 0), __shfl_sync(0xffffffffu, w.mean, 0),
            __shfl_sync(0xffffffffu, w.m2, 0)};
}

// The statistics of the whole block, returned to every thread; s holds 3 x 32 floats.
__device__ Welford block_welford(Welford w, float* s) {
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    w = warp_welford(w);
    if (lane == 0) {
        s[warp] = w.n;
        s[32 + warp] = w.mean;
        s[64 + warp] = w.m2;
    }
    __syncthreads();
    Welford p = {0.0f, 0.0f, 0.0f};
    if (lane < blockDim.x / 32) {
        p = {s[lane], s[32 + lane], s[64 + lane]};
    }
    return warp_welford(p);  // every warp combines the same partials, the same way
}
// --8<-- [end:welford]

// --8<-- [start:vector-io]
// W consecutive floats: one 16-byte load or store when W is 4 (p on 16 bytes).
template <int W>
__device__ __forceinline__ void load(const float* p, float* v) {
    if constexpr (W == 4) {
        float4 q = *reinterpret_cast<const float4*>(p);
        v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
    } else {
        v[0] = *p;
    }
}

template <int W>
__device__ __forceinline__ void store(float* p, const float* v) {
    if constexpr (W == 4) {
        *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
    } else {
        *p = v[0];
    }
}
// --8<-- [end:vector-io]

// --8<-- [start:normalise-row]
// y = (x - mu) * rs * gamma + beta for one row: x from the registers v holds (K
// chunks of W floats a thread), and read again beyond them.
template <int W, int K>
__device__ __forceinline__ void normalise_row(const float (&v)[K][W], const float* xr,
                                              const float* gamma, const float* beta,
                                              float* yr, int n, float mu, float rs) {
    int t = threadIdx.x, B = blockDim.x;
    float g[W], b[W], o[W];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        int i = t + k * B;
        if (i < n) {  // x from registers: no second read
            load<W>(gamma + (size_t)i * W, g);
            load<W>(beta + (size_t)i * W, b);
            for (int j = 0; j < W; ++j) {
                o[j] = (v[k][j] - mu) * rs * g[j] + b[j];
            }
            store<W>(yr + (size_t)i * W, o);
        }
    }
    for (int i = t + K * B; i < n; i += B) {
        float u[W];
        load<W>(xr + (size_t)i * W, u);  // the second read, beyond the registers
        load<W>(gamma + (size_t)i * W, g);
        load<W>(beta + (size_t)i * W, b);
        for (int j = 0; j < W; ++j) {
            o[j] = (u[j] - mu) * rs * g[j] + b[j];
        }
        store<W>(yr + (size_t)i * W, o);
    }
}
// --8<-- [end:normalise-row]

// --8<-- [start:layer-norm-row]
// One row, read W floats at a time; each thread keeps its first 16 floats.
template <int W>
__device__ void layer_norm_row(const float* xr, const float* gamma, const float* beta,
                               float* yr, int C, float eps, float* mean, float* rstd,
                               float* s) {
    constexpr int K = 16 / W;  // chunks of W floats a thread holds in registers
    int t = threadIdx.x, B = blockDim.x, n = C / W;  // n chunks make the row
    float v[K][W];  // constant indices after unrolling: registers, not local memory
    Welford w = {0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int k = 0; k < K; ++k) {
        int i = t + k * B;  // neighbouring threads, neighbouring chunks: coalesced
        if (i < n) {
            load<W>(xr + (size_t)i * W, v[k]);
            for (int j = 0; j < W; ++j) {
                welford_add(w, v[k][j]);
            }
        }
    }
    for (int i = t + K * B; i < n; i += B) {  // a row too long for the registers
        float u[W];
        load<W>(xr + (size_t)i * W, u);
        for (int j = 0; j < W; ++j) {
            welford_add(w, u[j]);
        }
    }
    w = block_welford(w, s);
    normalise_row<W, K>(v, xr, gamma, beta, yr, n, w.mean, rsqrtf(w.m2 / C + eps));
    if (t == 0) {
        *mean = w.mean;
        *rstd = rsqrtf(w.m2 / C + eps);
    }
}
// --8<-- [end:layer-norm-row]

// --8<-- [start:layer-norm-v3]
// 16 floats a thread stay in registers: 512 threads at most, so the compiler keeps
// within the 65,536 registers a block may use.
extern "C" __global__ void __launch_bounds__(512)
    layer_norm_v3(const float* x, const float* gamma, const float* beta, float* y,
                  float* mean, float* rstd, int rows, int C, float eps) {
    __shared__ float s[3 * 32];
    int r = blockIdx.x;
    const float* xr = x + (size_t)r * C;
    float* yr = y + (size_t)r * C;
    if (C % 4 == 0) {  // every row starts on 16 bytes (the launcher checks x and y)
        layer_norm_row<4>(xr, gamma, beta, yr, C, eps, mean + r, rstd + r, s);
    } else {
        layer_norm_row<1>(xr, gamma, beta, yr, C, eps, mean + r, rstd + r, s);
    }
}
// --8<-- [end:layer-norm-v3]

// --8<-- [start:layer-norm-row-v4]
// v4's row: v1's two exact passes (the mean, then squared deviations from it), made
// over the registers instead of memory: no division per element as in Welford's
// update, no cancellation as in v2, and x still crosses DRAM once.
template <int W>
__device__ void layer_norm_row_v4(const float* xr, const float* gamma,
                                  const float* beta, float* yr, int C, float eps,
                                  float* mean, float* rstd, float* s) {
    constexpr int K = 16 / W;
    int t = threadIdx.x, B = blockDim.x, n = C / W;
    float v[K][W];
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        if (t + k * B < n) {
            load<W>(xr + (size_t)(t + k * B) * W, v[k]);
            for (int j = 0; j < W; ++j) {
                sum += v[k][j];
            }
        }
    }
    for (int i = t + K * B; i < n; i += B) {  // a row too long for the registers
        float u[W];
        load<W>(xr + (size_t)i * W, u);
        for (int j = 0; j < W; ++j) {
            sum += u[j];
        }
    }
    float mu = block_sum(sum, s) / C;
    float dev = 0.0f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        if (t + k * B < n) {
            for (int j = 0; j < W; ++j) {
                float d = v[k][j] - mu;
                dev += d * d;
            }
        }
    }
    for (int i = t + K * B; i < n; i += B) {
        float u[W];
        load<W>(xr + (size_t)i * W, u);
        for (int j = 0; j < W; ++j) {
            float d = u[j] - mu;
            dev += d * d;
        }
    }
    float rs = rsqrtf(block_sum(dev, s) / C + eps);
    normalise_row<W, K>(v, xr, gamma, beta, yr, n, mu, rs);
    if (t == 0) {
        *mean = mu;
        *rstd = rs;
    }
}
// --8<-- [end:layer-norm-row-v4]

// --8<-- [start:layer-norm-v4]
extern "C" __global__ void __launch_bounds__(512)
    layer_norm_v4(const float* x, const float* gamma, const float* beta, float* y,
                  float* mean, float* rstd, int rows, int C, float eps) {
    __shared__ float s[32];
    int r = blockIdx.x;
    const float* xr = x + (size_t)r * C;
    float* yr = y + (size_t)r * C;
    if (C % 4 == 0) {  // every row starts on 16 bytes (the launcher checks x and y)
        layer_norm_row_v4<4>(xr, gamma, beta, yr, C, eps, mean + r, rstd + r, s);
    } else {
        layer_norm_row_v4<1>(xr, gamma, beta, yr, C, eps, mean + r, rstd + r, s);
    }
}
// --8<-- [end:layer-norm-v4]
