// merge_heads: the inverse of split_heads. (n, B, H, T, d) -> (B, T, n, H, d): with
// n = 1, the attention output o (B, H, T, d) back to (B, T, C), each token's heads
// side by side, the input of the output projection (nanoGPT's
// y.transpose(1, 2).contiguous().view(B, T, C)). With n = 3 it is split_heads'
// backward pass: dq, dk, dv (3, B, H, T, d) to dqkv (B, T, 3C). One read and one
// write per element, a copy's traffic.
//
// v1: one thread per output element, in a grid-stride loop; the output index
//     taken apart into (b, t, s, h, e). Runs of d contiguous floats on both sides.
// v2: float4 and a 3-D grid whose y and z name the head and the pair (s, b), one
//     division per thread, as split_heads_v2 (d % 4 == 0, 16-byte aligned arrays).

// --8<-- [start:merge-heads-v1]
// y (n, B, H, T, d) -> x (B, T, n, H, d)
extern "C" __global__ void merge_heads_v1(const float* y, float* x, int B, int T, int n,
                                          int H, int d) {
    int total = B * T * n * H * d;  // within int: the launcher checks
    int stride = gridDim.x * blockDim.x;
    for (int o = blockIdx.x * blockDim.x + threadIdx.x; o < total; o += stride) {
        int e = o % d, r = o / d;  // x[b, t, s, h, e]
        int h = r % H;
        r /= H;
        int s = r % n;
        r /= n;
        int t = r % T, b = r / T;
        x[o] = y[(((s * B + b) * H + h) * T + t) * d + e];
    }
}
// --8<-- [end:merge-heads-v1]

// --8<-- [start:merge-heads-v2]
// Grid (T d/4 / block, H, n B), as split_heads_v2: a block row reads one head's
// T x d contiguous floats and writes them a row of d at a time into x.
extern "C" __global__ void merge_heads_v2(const float* y, float* x, int B, int T, int n,
                                          int H, int d) {
    int d4 = d / 4;
    int h = blockIdx.y, s = blockIdx.z / B, b = blockIdx.z % B;
    const float4* y4 =
        reinterpret_cast<const float4*>(y) + ((s * B + b) * H + h) * T * d4;
    float4* x4 = reinterpret_cast<float4*>(x) + (s * H + h) * d4;
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // (t, e) within the head
    if (i < T * d4) {
        int t = i / d4, e = i - t * d4;
        x4[(b * T + t) * n * H * d4 + e] = y4[i];
    }
}
// --8<-- [end:merge-heads-v2]
