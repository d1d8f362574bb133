// avg_pool: 2 x 2 average pooling with stride 2, NHWC: X is N x H x W x C, Y is
// N x (H/2) x (W/2) x C (an odd last row or column is left out), each output the
// mean of its 2 x 2 window. LeNet-5's subsampling layers, less their trainable
// scale (the next layer's weights absorb it).
//
// v1: one thread per output; consecutive threads on consecutive channels.

// --8<-- [start:avg-pool-v1]
extern "C" __global__ void avg_pool_v1(const float* X, float* Y, int N, int H, int W,
                                       int C) {
    int P = H / 2, Q = W / 2;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)N * P * Q * C) return;
    int c = i % C, q = (i / C) % Q, p = (i / C / Q) % P, n = i / C / Q / P;
    const float* x = X + (((size_t)n * H + 2 * p) * W + 2 * q) * C + c;
    size_t row = (size_t)W * C;  // from one row of pixels to the next
    Y[i] = 0.25f * (x[0] + x[C] + x[row] + x[row + C]);
}
// --8<-- [end:avg-pool-v1]
