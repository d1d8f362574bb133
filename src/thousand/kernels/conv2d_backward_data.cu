// conv2d_backward_data: dX = dL/dX of Y = conv2d(X, K), from dY = dL/dY (NHWC, as
// in conv2d.cu; dY is N x P x Q x F, K is R x S x C x F, dX is N x H x W x C with
// H = P + R - 1 and W = Q + S - 1). Each input pixel took part in up to R*S
// outputs, so its gradient gathers from all of them:
//     dX[n,h,w,c] = sum over r, s, f of dY[n, h-r, w-s, f] * K[r, s, c, f]
// over the (r, s) for which (h-r, w-s) is an output pixel. Gathering, each thread
// writes only its own element: no two threads add into the same place, no atomics.
//
// v1: direct: one thread per element of dX.
// v2: col2im: the launcher first runs the GEMM dcols = dY K^T (matmul.cu; dY as a
//     (N*P*Q) x F matrix, K^T as F x (R*S*C)); this kernel then gathers, for each
//     element of dX, the entries of dcols that came from it.

// --8<-- [start:conv2d-backward-data-v1]
extern "C" __global__ void conv2d_backward_data_v1(const float* dY, const float* K,
                                                   float* dX, int N, int H, int W,
                                                   int C, int R, int S, int F) {
    int P = H - R + 1, Q = W - S + 1;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)N * H * W * C) return;
    int c = i % C, w = (i / C) % W, h = (i / C / W) % H, n = i / C / W / H;
    float acc = 0.0f;
    for (int r = 0; r < R; ++r) {
        int p = h - r;
        if (p < 0 || p >= P) continue;
        for (int s = 0; s < S; ++s) {
            int q = w - s;
            if (q < 0 || q >= Q) continue;
            const float* g = dY + (((size_t)n * P + p) * Q + q) * F;
            const float* k = K + (((size_t)r * S + s) * C + c) * F;
            for (int f = 0; f < F; ++f) {
                acc += g[f] * k[f];
            }
        }
    }
    dX[i] = acc;
}
// --8<-- [end:conv2d-backward-data-v1]

// --8<-- [start:conv2d-backward-data-v2]
extern "C" __global__ void conv2d_backward_data_v2(const float* dcols, float* dX, int N,
                                                   int H, int W, int C, int R, int S) {
    int P = H - R + 1, Q = W - S + 1;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)N * H * W * C) return;
    int c = i % C, w = (i / C) % W, h = (i / C / W) % H, n = i / C / W / H;
    long long width = (long long)R * S * C;
    float acc = 0.0f;
    for (int r = 0; r < R; ++r) {
        int p = h - r;
        if (p < 0 || p >= P) continue;
        for (int s = 0; s < S; ++s) {
            int q = w - s;
            if (q < 0 || q >= Q) continue;
            long long row = ((long long)n * P + p) * Q + q;
            acc += dcols[row * width + ((size_t)r * S + s) * C + c];
        }
    }
    dX[i] = acc;
}
// --8<-- [end:conv2d-backward-data-v2]
