// global_avg_pool: Y[n, c] = the mean of X[n, :, :, c] over all H x W pixels, NHWC:
// X is N x H x W x C, Y is N x C. ResNet's last feature map becomes one vector per
// image this way, whatever its size. For each image it is a column reduction: the
// H W pixels are rows of C channels, summed down each column.
//
// v1: one block per (image, tile of 32 channels), blockDim (32, rows): threadIdx.x
//     picks the channel, so a warp reads 32 neighbouring floats of one pixel
//     (coalesced); the rows lanes stride down the pixels, then their partial sums
//     meet in a shared-memory tree. N * C / 32 blocks: at N = 32, C = 64 only 64,
//     fewer than the H200's 132 SMs (the next rung splits the pixels over blocks).
// v2: the pixels split over blocks too: grid (channel tiles, chunks, images), about
//     a thousand blocks in all. Each block sums its chunk as v1 sums the image and
//     writes one partial sum per channel; the last block of each (image, tile) to
//     finish (a counter, an atomicAdd after a __threadfence, as batch_norm_v1)
//     adds the chunks' sums in chunk order: the same result whichever finished last.

// --8<-- [start:global-avg-pool-v1]
extern "C" __global__ void global_avg_pool_v1(const float* X, float* Y, int N, int HW,
                                              int C) {
    extern __shared__ float partial[];  // blockDim.y x blockDim.x sums
    int c = blockIdx.x * blockDim.x + threadIdx.x, n = blockIdx.y;
    float s = 0.0f;
    if (c < C) {
        const float* x = X + (size_t)n * HW * C + c;
        for (int i = threadIdx.y; i < HW; i += blockDim.y) {
            s += x[(size_t)i * C];
        }
    }
    float* mine = partial + threadIdx.y * blockDim.x + threadIdx.x;
    *mine = s;
    for (int half = blockDim.y / 2; half > 0; half /= 2) {  // rows: a power of 2
        __syncthreads();
        if (threadIdx.y < half) {
            *mine += mine[half * blockDim.x];
        }
    }
    if (threadIdx.y == 0 && c < C) {
        Y[(size_t)n * C + c] = *mine / HW;
    }
}
// --8<-- [end:global-avg-pool-v1]

// --8<-- [start:global-avg-pool-v2]
extern "C" __global__ void global_avg_pool_v2(const float* X, float* Y, float* partial,
                                              unsigned* count, int HW, int C,
                                              int chunk_rows) {
    extern __shared__ float sums[];  // blockDim.y x blockDim.x
    __shared__ int last_block;
    int t = threadIdx.y * blockDim.x + threadIdx.x, chunks = gridDim.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x, n = blockIdx.z;
    int r0 = blockIdx.y * chunk_rows, r1 = min(HW, r0 + chunk_rows);
    float s = 0.0f;
    if (c < C) {
        const float* x = X + (size_t)n * HW * C + c;
#pragma unroll 4
        for (int i = r0 + threadIdx.y; i < r1; i += blockDim.y) {
            s += x[(size_t)i * C];
        }
    }
    float* mine = sums + t;
    *mine = s;
    for (int half = blockDim.y / 2; half > 0; half /= 2) {  // rows: a power of 2
        __syncthreads();
        if (threadIdx.y < half) {
            *mine += mine[half * blockDim.x];
        }
    }
    float* chunk_sums = partial + (size_t)n * chunks * C;  // this image's chunks x C
    if (threadIdx.y == 0 && c < C) {
        chunk_sums[(size_t)blockIdx.y * C + c] = *mine;
        __threadfence();  // the sum is visible to every block before the count
    }
    __syncthreads();
    int tile = n * gridDim.x + blockIdx.x;
    if (t == 0) {
        last_block = atomicAdd(count + tile, 1u) == (unsigned)chunks - 1;
    }
    __syncthreads();
    if (!last_block) return;
    __threadfence();                  // the count before the sums: read nothing older
    if (threadIdx.y == 0 && c < C) {  // every chunk is in: add them in order
        const volatile float* p = chunk_sums + c;  // from memory, not this SM's L1
        float total = 0.0f;
        for (int k = 0; k < chunks; ++k) {
            total += p[(size_t)k * C];
        }
        Y[(size_t)n * C + c] = total / HW;
    }
    if (t == 0) count[tile] = 0;  // ready for the next launch
}
// --8<-- [end:global-avg-pool-v2]
