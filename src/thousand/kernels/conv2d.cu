// conv2d: Y = X * K, a 2-D convolution (as deep learning uses the word: a
// cross-correlation, the kernel not flipped), stride 1, no padding ("valid").
// Layout NHWC: X is N x H x W x C, K is R x S x C x F, Y is N x P x Q x F with
// P = H - R + 1 and Q = W - S + 1:
//     Y[n,p,q,f] = sum over r, s, c of X[n, p+r, q+s, c] * K[r, s, c, f].
// With the channels last, the F outputs of one pixel are neighbours in memory, and
// Y seen as a matrix of N*P*Q rows and F columns is what a dense layer produces:
// the bias and activation kernels of the dense layers serve the convolution too.
//
// v1: direct: one thread per output, consecutive threads on consecutive f: they read
//     the same X (a broadcast) and neighbouring floats of K (coalesced).
// v2: im2col: one thread per element of the patch matrix, cols[(n,p,q), (r,s,c)] =
//     X[n, p+r, q+s, c]; the launcher then runs the GEMM Y = cols K of matmul.cu,
//     K seen as a (R*S*C) x F matrix. The patches repeat each input up to R*S times:
//     memory traded for the speed of a tuned matrix product.

// --8<-- [start:conv2d-v1]
extern "C" __global__ void conv2d_v1(const float* X, const float* K, float* Y, int N,
                                     int H, int W, int C, int R, int S, int F) {
    int P = H - R + 1, Q = W - S + 1;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)N * P * Q * F) return;
    int f = i % F;  // i = ((n * P + p) * Q + q) * F + f
    int q = (i / F) % Q;
    int p = (i / F / Q) % P;
    int n = i / F / Q / P;
    float acc = 0.0f;
    for (int r = 0; r < R; ++r) {
        for (int s = 0; s < S; ++s) {
            const float* x = X + (((size_t)n * H + p + r) * W + q + s) * C;
            const float* k = K + ((size_t)r * S + s) * C * F + f;
            for (int c = 0; c < C; ++c) {
                acc += x[c] * k[(size_t)c * F];
            }
        }
    }
    Y[i] = acc;
}
// --8<-- [end:conv2d-v1]

// --8<-- [start:conv2d-v2]
extern "C" __global__ void conv2d_v2(const float* X, float* cols, int N, int H, int W,
                                     int C, int R, int S) {
    int P = H - R + 1, Q = W - S + 1;
    long long width = (long long)R * S * C;  // one row of cols: one patch
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)N * P * Q * width) return;
    long long row = i / width;  // the output pixel (n, p, q)
    int j = i % width;          // the patch element (r, s, c)
    int c = j % C, s = (j / C) % S, r = j / C / S;
    int q = row % Q, p = (row / Q) % P, n = row / Q / P;
    cols[i] = X[(((size_t)n * H + p + r) * W + q + s) * C + c];
}
// --8<-- [end:conv2d-v2]
