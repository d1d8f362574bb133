// split_heads: the output of a Transformer's qkv linear layer, (B, T, 3C) read as
// (B, T, n, H, d) with n = 3 and C = H d, permuted to (n, B, H, T, d): q, k and v
// one after the other, each (B, H, T, d), the layout the attention kernels take.
// nanoGPT writes it as qkv.split(C, 2), then .view(B, T, H, d).transpose(1, 2) on
// each (PyTorch then copies when a kernel needs it contiguous). With n = 1 it is the
// backward pass of merge_heads; merge_heads is its backward pass: each is the
// other's inverse. A pure permutation: one read and one write per element, a
// copy's traffic, so the copy kernel is the speed to reach.
//
// v1: one thread per output element, in a grid-stride loop. The output index is
//     taken apart into (s, b, h, t, e); both sides move in runs of d contiguous
//     floats (one head's row), so reads and writes stay coalesced for d >= 8.
// v2: float4, four floats of a head's row per load and store, and a 3-D grid whose
//     y and z name the head h and the pair (s, b), so a thread divides once (to
//     find t) where v1 divides four times per element: at a copy's speed the
//     integer division is not free. Needs d % 4 == 0 (every head size a model
//     uses) and 16-byte aligned arrays.

// --8<-- [start:split-heads-v1]
// x (B, T, n, H, d) -> y (n, B, H, T, d)
extern "C" __global__ void split_heads_v1(const float* x, float* y, int B, int T, int n,
                                          int H, int d) {
    int total = n * B * H * T * d;  // within int: the launcher checks
    int stride = gridDim.x * blockDim.x;
    for (int o = blockIdx.x * blockDim.x + threadIdx.x; o < total; o += stride) {
        int e = o % d, r = o / d;  // y[s, b, h, t, e]
        int t = r % T;
        r /= T;
        int h = r % H;
        r /= H;
        int b = r % B, s = r / B;
        y[o] = x[(((b * T + t) * n + s) * H + h) * d + e];
    }
}
// --8<-- [end:split-heads-v1]

// --8<-- [start:split-heads-v2]
// Grid (T d/4 / block, H, n B): a block row per (s, b, h), the output's T x d
// contiguous floats of one head, so a thread divides once, to find t.
extern "C" __global__ void split_heads_v2(const float* x, float* y, int B, int T, int n,
                                          int H, int d) {
    int d4 = d / 4;  // float4s per head row
    int h = blockIdx.y, s = blockIdx.z / B, b = blockIdx.z % B;
    const float4* x4 = reinterpret_cast<const float4*>(x) + (s * H + h) * d4;
    float4* y4 = reinterpret_cast<float4*>(y) + ((s * B + b) * H + h) * T * d4;
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // (t, e) within the head
    if (i < T * d4) {
        int t = i / d4, e = i - t * d4;
        y4[i] = x4[(b * T + t) * n * H * d4 + e];  // row (b, t) of x, head (s, h)
    }
}
// --8<-- [end:split-heads-v2]
