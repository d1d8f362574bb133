// max_pool_backward: the gradient of max_pool (max_pool.cu). Each output passed on
// only its window's winner, so dX[n, h, w, c] = the sum of dY[n, p, q, c] over the
// windows (p, q) whose argmax is h W + w; a pixel that won nowhere gets 0. With
// overlapping windows (3 x 3, stride 2) one pixel can win several.
//
// v1: a gather: one thread per input element visits the windows that contain it
//     (rows p with p stride - pad <= h < p stride - pad + window, columns alike:
//     at most ceil(window / stride)^2) and adds the dY of those it won. Each dX is
//     written once, by one thread, summing in a fixed order: the result is the same
//     on every run. The scatter (one thread per output, atomicAdd of dY into dX at
//     its argmax) needs dX zeroed first, an extra pass, and its additions land in
//     whatever order the threads arrive, so overlapping windows give sums that
//     differ in the last bits from run to run.

// --8<-- [start:max-pool-backward-v1]
extern "C" __global__ void max_pool_backward_v1(const float* dY, const int* argmax,
                                                float* dX, int N, int H, int W, int C,
                                                int P, int Q, int window, int stride,
                                                int pad) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)N * H * W * C) return;
    int c = i % C, w = (i / C) % W, h = (i / C / W) % H, n = i / C / W / H;
    // windows p with h + pad - window < p stride <= h + pad; a negative numerator
    // rounds towards 0 in C, which the max with 0 makes harmless
    int p0 = max(0, (h + pad - window + stride) / stride);
    int p1 = min(P - 1, (h + pad) / stride);
    int q0 = max(0, (w + pad - window + stride) / stride);
    int q1 = min(Q - 1, (w + pad) / stride);
    int me = h * W + w;
    size_t image = (size_t)n * P * Q * C + c;
    float sum = 0.0f;
    for (int p = p0; p <= p1; ++p) {
        for (int q = q0; q <= q1; ++q) {
            size_t o = image + ((size_t)p * Q + q) * C;
            if (argmax[o] == me) {
                sum += dY[o];
            }
        }
    }
    dX[i] = sum;
}
// --8<-- [end:max-pool-backward-v1]
