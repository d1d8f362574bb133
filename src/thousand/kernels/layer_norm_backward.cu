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
