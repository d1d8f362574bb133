// global_avg_pool_backward: the gradient of global_avg_pool (global_avg_pool.cu).
// Each output was the mean of H W pixels of its channel, so each of those pixels
// gets 1 / (H W) of its gradient: dX[n, h, w, c] = dY[n, c] / (H W), dX NHWC.
//
// v1: one thread per input pixel and channel; consecutive threads on consecutive
//     channels, so a warp reads neighbouring floats of dY (cached: every pixel of
//     the image reads the same C values) and writes neighbouring floats of dX.

// --8<-- [start:global-avg-pool-backward-v1]
extern "C" __global__ void global_avg_pool_backward_v1(const float* dY, float* dX,
                                                       int N, int HW, int C) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)N * HW * C) return;
    int c = i % C, n = i / C / HW;
    dX[i] = dY[(size_t)n * C + c] / HW;
}
// --8<-- [end:global-avg-pool-backward-v1]
