// layer_norm_backward: the gradients of layer_norm (layer_norm.cu) for one upstream
// gradient dy (rows x C), from x, gamma and the forward's per-row mean and rstd.
// With xhat = (x - mean) * rstd and g = dy * gamma, per row:
//     dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
// (mean and rstd depend on every x of the row: the two means are that dependence),
// and over all rows, per column:
//     dgamma = sum of dy * xhat,    dbeta = sum of dy.
// dx is a row reduction, like the forward. dgamma and dbeta are column sums over
// every row: an atomicAdd from each row into the same C floats would queue rows-deep
// at every address, so they are reduced in two stages instead: each block sums its
// own rows into its own row of a (blocks, 2C) buffer of partials, then col_sum_v1
// (col_sum.cu) adds the partials of each column. Blocks of whole warps.
//
// v1: a grid of at most 512 blocks, block b taking rows b, b + 512, ...; for each
//     row two block sums (of g and g * xhat), then dx. Thread t owns columns t,
//     t + block, ... in every row, so it adds into its columns of the block's
//     partials with no race and no atomics; that row of 2C floats stays in cache.
//     Slow where rows are few and wide: at 1,024 x 8,192 on an H100 its 512 blocks
//     take two rows each, so the partials (512 x 2C floats) weigh as much as dy,
//     and every row is read twice.
// v2: the row in registers, 8 columns a thread (rows of up to 8 * block columns),
//     so x and dy are read once; each thread adds its columns' dgamma and dbeta in
//     registers over all its block's rows and writes them once at the end; the
//     grid is one wave of resident blocks (the launcher's choice), not 512, so the
//     partials are a few rows of 2C floats a multiprocessor. The two row sums share
//     one pass through shared memory (block_sum2).

#include "block_sum.cuh"

// --8<-- [start:layer-norm-backward-v1]
extern "C" __global__ void layer_norm_backward_v1(const float* x, const float* dy,
                                                  const float* gamma, const float* mean,
                                                  const float* rstd, float* dx,
                                                  float* partial, int rows, int C) {
    __shared__ float s[32];
    float* pg = partial + (size_t)blockIdx.x * 2 * C;  // this block's dgamma partials
    float* pb = pg + C;                                // and its dbeta partials
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        pg[c] = 0.0f;
        pb[c] = 0.0f;
    }
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* xr = x + (size_t)r * C;
        const float* dyr = dy + (size_t)r * C;
        float mu = mean[r], rs = rstd[r];
        float sg = 0.0f, sgx = 0.0f;
        for (int c = threadIdx.x; c < C; c += blockDim.x) {
            float xh = (xr[c] - mu) * rs, d = dyr[c], g = d * gamma[c];
            sg += g;
            sgx += g * xh;
            pg[c] += d * xh;  // column c is this thread's in every row: no race
            pb[c] += d;
        }
        float mg = block_sum(sg, s) / C, mgx = block_sum(sgx, s) / C;
        float* dxr = dx + (size_t)r * C;
        for (int c = threadIdx.x; c < C; c += blockDim.x) {  // the row again, cached
            float xh = (xr[c] - mu) * rs, g = dyr[c] * gamma[c];
            dxr[c] = rs * (g - mg - xh * mgx);
        }
    }
}
// --8<-- [end:layer-norm-backward-v1]

// --8<-- [start:layer-norm-backward-v2]
constexpr int HOLD = 8;  // columns a thread keeps in registers: rows of <= 8 * block

// The block's sums of a and of b, returned to every thread: one barrier pair for both.
__device__ __forceinline__ float2 block_sum2(float a, float b, float2* s) {
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int o = 16; o > 0; o /= 2) {
        a += __shfl_xor_sync(0xffffffffu, a, o);
        b += __shfl_xor_sync(0xffffffffu, b, o);
    }
    __syncthreads();  // the previous row's readers of s are done
    if (lane == 0) s[warp] = make_float2(a, b);
    __syncthreads();
    float2 v = lane < blockDim.x / 32 ? s[lane] : make_float2(0.0f, 0.0f);
    for (int o = 16; o > 0; o /= 2) {
        v.x += __shfl_xor_sync(0xffffffffu, v.x, o);
        v.y += __shfl_xor_sync(0xffffffffu, v.y, o);
    }
    return v;
}

extern "C" __global__ void __launch_bounds__(1024)
    layer_norm_backward_v2(const float* x, const float* dy, const float* gamma,
                           const float* mean, const float* rstd, float* dx,
                           float* partial, int rows, int C) {
    __shared__ float2 s[32];
    float gm[HOLD], acc_g[HOLD], acc_b[HOLD];  // constant indices: registers
#pragma unroll
    for (int j = 0; j < HOLD; ++j) {
        int c = j * blockDim.x + threadIdx.x;  // coalesced: a warp reads 32 in a row
        gm[j] = c < C ? gamma[c] : 0.0f;
        acc_g[j] = 0.0f;
        acc_b[j] = 0.0f;
    }
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* xr = x + (size_t)r * C;
        const float* dyr = dy + (size_t)r * C;
        float mu = mean[r], rs = rstd[r];
        float xh[HOLD], g[HOLD], sg = 0.0f, sgx = 0.0f;
#pragma unroll
        for (int j = 0; j < HOLD; ++j) {  // all 16 loads in flight before any use
            int c = j * blockDim.x + threadIdx.x;
            float d = c < C ? dyr[c] : 0.0f;
            xh[j] = c < C ? (xr[c] - mu) * rs : 0.0f;
            g[j] = d * gm[j];
            sg += g[j];
            sgx += g[j] * xh[j];
            acc_g[j] += d * xh[j];
            acc_b[j] += d;
        }
        float2 m = block_sum2(sg, sgx, s);
        float mg = m.x / C, mgx = m.y / C;
        float* dxr = dx + (size_t)r * C;
#pragma unroll
        for (int j = 0; j < HOLD; ++j) {
            int c = j * blockDim.x + threadIdx.x;
            if (c < C) dxr[c] = rs * (g[j] - mg - xh[j] * mgx);
        }
    }
    float* pg = partial + (size_t)blockIdx.x * 2 * C;  // this block's dgamma partials
    float* pb = pg + C;                                // and its dbeta partials
#pragma unroll
    for (int j = 0; j < HOLD; ++j) {
        int c = j * blockDim.x + threadIdx.x;
        if (c < C) {
            pg[c] = acc_g[j];
            pb[c] = acc_b[j];
        }
    }
}
// --8<-- [end:layer-norm-backward-v2]
