// conv2d_backward_filter: dK = dL/dK of Y = conv2d(X, K), from X and dY = dL/dY
// (NHWC, as in conv2d.cu; X is N x H x W x C, dY is N x P x Q x F, dK is
// R x S x C x F with R = H - P + 1 and S = W - Q + 1). Every weight touched every
// output pixel of every image:
//     dK[r,s,c,f] = sum over n, p, q of X[n, p+r, q+s, c] * dY[n, p, q, f].
//
// v1: direct: one thread per weight, a loop over all N*P*Q output pixels. Only
//     R*S*C*F threads, each with a long loop: little parallelism for small layers.
// v2: the patch matrix written transposed, colsT[(r,s,c), (n,p,q)] =
//     X[n, p+r, q+s, c], one thread per element; the launcher then runs the GEMM
//     dK = colsT dY (matmul.cu), which spreads the long sum over the whole GPU.

// --8<-- [start:conv2d-backward-filter-v1]
extern "C" __global__ void conv2d_backward_filter_v1(const float* X, const float* dY,
                                                     float* dK, int N, int H, int W,
                                                     int C, int R, int S, int F) {
    int P = H - R + 1, Q = W - S + 1;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)R * S * C * F) return;
    int f = i % F, c = (i / F) % C, s = (i / F / C) % S, r = i / F / C / S;
    float acc = 0.0f;
    for (int n = 0; n < N; ++n) {
        for (int p = 0; p < P; ++p) {
            for (int q = 0; q < Q; ++q) {
                float x = X[(((size_t)n * H + p + r) * W + q + s) * C + c];
                acc += x * dY[(((size_t)n * P + p) * Q + q) * F + f];
            }
        }
    }
    dK[i] = acc;
}
// --8<-- [end:conv2d-backward-filter-v1]

// --8<-- [start:conv2d-backward-filter-v2]
extern "C" __global__ void conv2d_backward_filter_v2(const float* X, float* colsT,
                                                     int N, int H, int W, int C, int R,
                                                     int S) {
    int P = H - R + 1, Q = W - S + 1;
    long long pixels = (long long)N * P * Q;  // one row of colsT
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= pixels * R * S * C) return;
    long long j = i / pixels;    // the weight's (r, s, c)
    long long pix = i % pixels;  // consecutive threads: consecutive output pixels
    int c = j % C, s = (j / C) % S, r = j / C / S;
    int q = pix % Q, p = (pix / Q) % P, n = pix / Q / P;
    colsT[i] = X[(((size_t)n * H + p + r) * W + q + s) * C + c];
}
// --8<-- [end:conv2d-backward-filter-v2]
