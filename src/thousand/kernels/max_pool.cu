// max_pool: Y[n, p, q, c] = the largest X[n, h, w, c] in the window of output (p, q):
// rows h = p stride - pad .. + window - 1, columns alike, NHWC (X N x H x W x C, Y
// N x P x Q x C, P = (H + 2 pad - window) / stride + 1, Q alike). Padding cells
// never win (they read as -infinity), and every window holds a real pixel (pad <=
// window / 2, as PyTorch asks). Windows may overlap (AlexNet's 3 x 3, stride 2).
// argmax[n, p, q, c] = h W + w of the winner, what the backward pass routes the
// gradient to; among equal values the first in row-major window order wins (a
// strict > comparison), as the NumPy reference picks it.
//
// v1: one thread per output, consecutive threads on consecutive channels: each
//     window row is read as neighbouring floats of one pixel (coalesced), and the
//     pixels a neighbouring window shares come from cache.

// --8<-- [start:max-pool-v1]
extern "C" __global__ void max_pool_v1(const float* X, float* Y, int* argmax, int N,
                                       int H, int W, int C, int P, int Q, int window,
                                       int stride, int pad) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)N * P * Q * C) return;
    int c = i % C, q = (i / C) % Q, p = (i / C / Q) % P, n = i / C / Q / P;
    int h0 = p * stride - pad, w0 = q * stride - pad;  // the window's corner
    const float* x = X + (size_t)n * H * W * C + c;
    float best = -INFINITY;
    int where = -1;
    for (int h = max(h0, 0); h < min(h0 + window, H); ++h) {  // real rows only
        for (int w = max(w0, 0); w < min(w0 + window, W); ++w) {
            float v = x[((size_t)h * W + w) * C];
            if (v > best || where < 0) {  // the first real pixel always counts
                best = v;
                where = h * W + w;
            }
        }
    }
    Y[i] = best;
    argmax[i] = where;
}
// --8<-- [end:max-pool-v1]
