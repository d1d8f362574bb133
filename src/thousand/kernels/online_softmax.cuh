// Online softmax's running pair (Milakov & Gimelshein 2018, arXiv:1805.02867): a
// max m and the sum d of e^(x - m), combined across threads, warps and a block.
// softmax.cu (v2 to v4) and cross_entropy.cu build on it. Blocks are whole warps:
// the shuffles read all 32 lanes.
#pragma once

// --8<-- [start:online]
// e^(a - m) for m a running max (m >= a): 0 where a = -inf, even when m = -inf too
// (nothing finite seen yet), where expf(-inf - -inf) would be NaN.
__device__ __forceinline__ float exp_from(float a, float m) {
    return a == -INFINITY ? 0.0f : expf(a - m);
}

// A running max m and the sum d of e^(x - m) over the elements seen so far.
struct MD {
    float m, d;
};

// Two pairs become one: each sum rescaled to the larger max. One element x is the
// pair (x, 1), so a pass adds x with md_combine(md, {x, 1.0f}).
__device__ __forceinline__ MD md_combine(MD a, MD b) {
    float m = fmaxf(a.m, b.m);
    return {m, a.d * exp_from(a.m, m) + b.d * exp_from(b.m, m)};
}

// md_combine is commutative, bit for bit, so every lane ends with the same pair.
__device__ __forceinline__ MD warp_md(MD v) {
    for (int offset = 16; offset > 0; offset /= 2) {
        MD other = {__shfl_xor_sync(0xffffffffu, v.m, offset),
                    __shfl_xor_sync(0xffffffffu, v.d, offset)};
        v = md_combine(v, other);
    }
    return v;
}

__device__ __forceinline__ MD block_md(MD v) {
    __shared__ MD partial[32];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_md(v);
    if (lane == 0) {
        partial[warp] = v;
    }
    __syncthreads();
    v = lane < blockDim.x / 32 ? partial[lane] : MD{-INFINITY, 0.0f};
    return warp_md(v);
}
// --8<-- [end:online]
