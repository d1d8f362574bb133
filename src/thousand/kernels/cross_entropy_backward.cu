// cross_entropy_backward: the gradient of cross_entropy (cross_entropy.cu) with
// respect to the logits, for an upstream gradient dloss[r] per row (1/N each for
// the mean loss):
//     dx[r][k] = (softmax(x[r])[k] - (k == t[r])) * dloss[r],
// the softmax taken as e^(x - lse[r]) from the log-sum-exp the forward wrote, so
// no max or sum is recomputed: one read of the logits, one write of dx, the
// traffic of a copy. dx may be the logits' own memory (out=logits: each element is
// read before it is written, by the same thread), as llm.c's fused classifier
// does: the (N, V) gradient then costs no memory of its own, 1.6 GB at GPT-2's
// N = 8,192 and V = 50,257. A target outside [0, V) makes its row NaN.
//
// v1: one block per row. A row starts at r * V floats, so with V odd its 16-byte
//     boundary moves from row to row: each row is cut into a head of 0 to 3
//     floats, a body of float4s (four loaded before any is stored) and a tail of
//     0 to 3. float4 needs x and dx on the same offset from 16 bytes (in place,
//     or two whole arrays); otherwise the row goes through scalar loads.

// --8<-- [start:grad]
// One gradient element: p - [k == t] times the row's upstream gradient s.
__device__ __forceinline__ float grad(float x, float lse, int k, int t, float s) {
    return (expf(x - lse) - (k == t ? 1.0f : 0.0f)) * s;  // x = -inf: p = 0
}

__device__ __forceinline__ float4 grad4(float4 f, float lse, int k, int t, float s) {
    return make_float4(grad(f.x, lse, k, t, s), grad(f.y, lse, k + 1, t, s),
                       grad(f.z, lse, k + 2, t, s), grad(f.w, lse, k + 3, t, s));
}
// --8<-- [end:grad]

// --8<-- [start:cross-entropy-backward-v1]
constexpr int UNROLL = 4;  // float4s a thread loads before it stores any

extern "C" __global__ void cross_entropy_backward_v1(const float* x, const int* targets,
                                                     const float* lse,
                                                     const float* dloss, float* dx,
                                                     int rows, int V) {
    size_t r = blockIdx.x;  // this block's row
    const float* xr = x + r * V;
    float* dr = dx + r * V;
    int t = targets[r];
    float l = lse[r], s = 0 <= t && t < V ? dloss[r] : NAN;
    int head = 0, n4 = 0;  // scalar columns before the float4 body, and its length
    if ((size_t)x % 16 == (size_t)dx % 16) {
        head = min((int)((16 - (size_t)xr % 16) % 16) / 4, V);
        n4 = (V - head) / 4;
    }
    int tail = head + 4 * n4;  // everything from here on is scalar too
    if (threadIdx.x < head) {
        int k = threadIdx.x;
        dr[k] = grad(xr[k], l, k, t, s);
    }
    const float4* x4 = reinterpret_cast<const float4*>(xr + head);
    float4* d4 = reinterpret_cast<float4*>(dr + head);
    for (int i0 = threadIdx.x; i0 < n4; i0 += UNROLL * blockDim.x) {
        float4 f[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            int i = i0 + u * blockDim.x;
            if (i < n4) {
                f[u] = x4[i];
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            int i = i0 + u * blockDim.x;
            if (i < n4) {
                d4[i] = grad4(f[u], l, head + 4 * i, t, s);
            }
        }
    }
    for (int k = tail + threadIdx.x; k < V; k += blockDim.x) {
        dr[k] = grad(xr[k], l, k, t, s);
    }
}
// --8<-- [end:cross-entropy-backward-v1]
