// batch_norm (training): per channel c (the last axis of X: an NHWC map, or M x C
// dense activations), the mean and biased variance over all M other positions,
// then Y = (X - mean) * invstd * gamma + beta, invstd = 1 / sqrt(var + eps). The
// kernel writes mean and invstd (the backward pass needs them; the model updates
// its running statistics from them) and var; Y is then batch_norm_inference_v1
// (batch_norm_inference.cu) fed the batch's mean and var.
//
// The statistics are a column reduction of an M x C matrix. M is large (N H W:
// 100,352 at N = 32, 56 x 56) and C small (64), so one thread per channel walking
// its column would leave the GPU idle: the rows are split into chunks, one block per
// (32 channels, chunk), and each block's result is merged with the others'.
// Numerics: Welford's running (count, mean, M2) per thread and Chan et al.'s merge
// of two such triples. One pass over X, with no E[x^2] - E[x]^2 cancellation (at
// a mean of 1e4 and a spread of 1, float32 sums of squares lose the variance);
// two exact passes (mean, then squared deviations) would need the whole grid to
// finish the mean before any block starts the second pass: another launch and
// another read of X.
//
// v1: blockDim (32, rows): threadIdx.x the channel (a warp reads 128 contiguous
//     bytes of a row), the rows lanes stride down the block's chunk, then merge in
//     a shared-memory tree. Each block writes its triple per channel to a buffer of
//     partials; the last block of each channel tile to finish (a counter per tile,
//     an atomicAdd after a __threadfence) merges the chunks' triples in chunk
//     order, so the result does not depend on which block finished last.

// Chan, Golub and LeVeque's merge: (n, mu, m2) absorbs (nb, mub, m2b).
__device__ __forceinline__ void chan_merge(float& n, float& mu, float& m2, float nb,
                                           float mub, float m2b) {
    float total = n + nb;
    if (total == 0.0f) return;
    float d = mub - mu, f = nb / total;
    mu += d * f;
    m2 += m2b + d * d * n * f;  // n nb / total
    n = total;
}

// --8<-- [start:batch-norm-v1]
extern "C" __global__ void batch_norm_v1(const float* X, float* mean, float* invstd,
                                         float* var, float* partial, unsigned* count,
                                         int M, int C, int chunk_rows, float eps) {
    extern __shared__ float s[];  // (n, mu, m2) of each thread: 3 planes
    __shared__ int last_block;
    int lanes = blockDim.x * blockDim.y, t = threadIdx.y * blockDim.x + threadIdx.x;
    int c = blockIdx.x * blockDim.x + threadIdx.x, chunks = gridDim.y;
    int r0 = blockIdx.y * chunk_rows, r1 = min(M, r0 + chunk_rows);
    float n = 0.0f, mu = 0.0f, m2 = 0.0f;
    if (c < C) {
        for (int r = r0 + threadIdx.y; r < r1; r += blockDim.y) {
            float x = X[(size_t)r * C + c], d = x - mu;
            n += 1.0f;
            mu += d / n;  // Welford's update
            m2 += d * (x - mu);
        }
    }
    s[t] = n;
    s[lanes + t] = mu;
    s[2 * lanes + t] = m2;
    for (int half = blockDim.y / 2; half > 0; half /= 2) {  // rows: a power of 2
        __syncthreads();
        if (threadIdx.y < half) {
            int o = t + half * blockDim.x;
            chan_merge(n, mu, m2, s[o], s[lanes + o], s[2 * lanes + o]);
            s[t] = n;
            s[lanes + t] = mu;
            s[2 * lanes + t] = m2;
        }
    }
    size_t plane = (size_t)chunks * C, slot = (size_t)blockIdx.y * C + c;
    if (threadIdx.y == 0 && c < C) {
        partial[slot] = n;
        partial[plane + slot] = mu;
        partial[2 * plane + slot] = m2;
        __threadfence();  // the triple is visible to every block before the count
    }
    __syncthreads();
    if (t == 0) {
        last_block = atomicAdd(count + blockIdx.x, 1u) == (unsigned)chunks - 1;
    }
    __syncthreads();
    if (!last_block) return;
    __threadfence();  // the counts before the triples: read nothing older
    if (threadIdx.y == 0 && c < C) {        // every chunk is in: merge them in order
        const volatile float* p = partial;  // from memory, not this SM's L1
        n = mu = m2 = 0.0f;
        for (int k = 0; k < chunks; ++k) {
            size_t at = (size_t)k * C + c;
            chan_merge(n, mu, m2, p[at], p[plane + at], p[2 * plane + at]);
        }
        float v = m2 / M;  // biased, as batch norm normalises
        mean[c] = mu;
        var[c] = v;
        invstd[c] = rsqrtf(v + eps);
    }
    if (t == 0) count[blockIdx.x] = 0;  // ready for the next launch
}
// --8<-- [end:batch-norm-v1]
