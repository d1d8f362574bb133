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

// --8<-- [start:global-avg-pool-v1]
extern "C" __global__ void global_avg_pool_v1(const float* X, float* Y, int N,
                                              int HW, int C) {
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
