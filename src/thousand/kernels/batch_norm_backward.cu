// batch_norm_backward: the gradients of batch_norm (batch_norm.cu, training mode)
// for an upstream gradient dY, from X, gamma and the forward's mean and invstd (C
// values each, channels on the last axis, M positions per channel). With
// xhat = (X - mean) * invstd, per channel:
//     dbeta = sum of dY,   dgamma = sum of dY * xhat     (over the M positions)
//     dX = gamma * invstd / M * (M dY - dbeta - xhat * dgamma)
// (the batch's mean and variance depend on every X of the channel: the two sums
// carry that dependence). The sums are column reductions, as in the forward; dX
// then needs them whole, so one kernel runs in two phases (two launches):
//
// v1: phase 0: blockDim (32, rows), one block per (32 channels, chunk of rows):
//     the rows lanes sum down the chunk, a shared-memory tree adds the lanes, each
//     block writes its two sums to a buffer of partials, and the last block of each
//     channel tile (a counter per tile, an atomicAdd after a __threadfence) adds
//     the chunks' sums in chunk order: the same result on every run, where an
//     atomicAdd per block into dgamma would add in arrival order. Phase 1: one
//     thread per element computes dX (dY and X read a second time).

// --8<-- [start:batch-norm-backward-v1]
extern "C" __global__ void batch_norm_backward_v1(
    const float* dY, const float* X, const float* gamma, const float* mean,
    const float* invstd, float* dX, float* dgamma, float* dbeta, float* partial,
    unsigned* count, int M, int C, int chunk_rows, int phase) {
    if (phase == 1) {  // dX, element by element, from the finished sums
        long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= (long long)M * C) return;
        int c = i % C;
        float is = invstd[c], xhat = (X[i] - mean[c]) * is;
        dX[i] = gamma[c] * is * (dY[i] - (dbeta[c] + xhat * dgamma[c]) / M);
        return;
    }
    extern __shared__ float s[];  // the sums of dY and dY * xhat: 2 planes
    __shared__ int last_block;
    int lanes = blockDim.x * blockDim.y, t = threadIdx.y * blockDim.x + threadIdx.x;
    int c = blockIdx.x * blockDim.x + threadIdx.x, chunks = gridDim.y;
    int r0 = blockIdx.y * chunk_rows, r1 = min(M, r0 + chunk_rows);
    float sum_dy = 0.0f, sum_dy_xhat = 0.0f;
    if (c < C) {
        float mu = mean[c], is = invstd[c];
        for (int r = r0 + threadIdx.y; r < r1; r += blockDim.y) {
            size_t at = (size_t)r * C + c;
            float d = dY[at];
            sum_dy += d;
            sum_dy_xhat += d * (X[at] - mu) * is;
        }
    }
    s[t] = sum_dy;
    s[lanes + t] = sum_dy_xhat;
    for (int half = blockDim.y / 2; half > 0; half /= 2) {  // rows: a power of 2
        __syncthreads();
        if (threadIdx.y < half) {
            s[t] += s[t + half * blockDim.x];
            s[lanes + t] += s[lanes + t + half * blockDim.x];
        }
    }
    size_t plane = (size_t)chunks * C, slot = (size_t)blockIdx.y * C + c;
    if (threadIdx.y == 0 && c < C) {
        partial[slot] = s[t];
        partial[plane + slot] = s[lanes + t];
        __threadfence();  // the sums are visible to every block before the count
    }
    __syncthreads();
    if (t == 0) {
        last_block = atomicAdd(count + blockIdx.x, 1u) == (unsigned)chunks - 1;
    }
    __syncthreads();
    if (!last_block) return;
    __threadfence();                  // the counts before the sums: read nothing older
    if (threadIdx.y == 0 && c < C) {  // every chunk is in: add them in order
        const volatile float* p = partial;  // from memory, not this SM's L1
        float b = 0.0f, g = 0.0f;
        for (int k = 0; k < chunks; ++k) {
            b += p[(size_t)k * C + c];
            g += p[plane + (size_t)k * C + c];
        }
        dbeta[c] = b;
        dgamma[c] = g;
    }
    if (t == 0) count[blockIdx.x] = 0;  // ready for the next launch
}
// --8<-- [end:batch-norm-backward-v1]
