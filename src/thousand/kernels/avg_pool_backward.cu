// avg_pool_backward: dX = dL/dX of Y = avg_pool(X), from dY (N x P x Q x C, NHWC).
// Each input pixel fed exactly one output (windows of 2 x 2, stride 2, no overlap),
// with weight 1/4: dX[n,h,w,c] = dY[n, h/2, w/2, c] / 4, and 0 for a last row or
// column the pooling left out (H or W odd).
//
// v1: one thread per element of dX.

// --8<-- [start:avg-pool-backward-v1]
extern "C" __global__ void avg_pool_backward_v1(const float* dY, float* dX, int N,
                                                int H, int W, int C) {
    int P = H / 2, Q = W / 2;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)N * H * W * C) return;
    int c = i % C, w = (i / C) % W, h = (i / C / W) % H, n = i / C / W / H;
    int p = h / 2, q = w / 2;
    dX[i] = (p < P && q < Q) ? 0.25f * dY[(((size_t)n * P + p) * Q + q) * C + c] : 0.0f;
}
// --8<-- [end:avg-pool-backward-v1]
