// cross_entropy: the language-model loss, fused with its softmax. For N rows of
// logits x (N x V float32, C order; V = 50,257 for GPT-2) and a target class t per
// row (int32), loss[r] = logsumexp(x[r]) - x[r][t] = -log softmax(x[r])[t], and
// lse[r] = logsumexp(x[r]), which the backward pass (cross_entropy_backward.cu)
// takes instead of the softmax: it is all it needs of the row. The loss is never a
// softmax written out: the row is read once and two floats come out.
//
// logsumexp = m + log(sum e^(x - m)), m the row's max: no term overflows (1e4 is
// fine), and the loss is taken as (m - x[t]) + log(sum), where m - x[t] is exact
// when the two are close, so the loss keeps its digits beside large logits. A -inf
// logit adds e^-inf = 0 (a masked class); a row with +inf or NaN gives NaN; a
// target outside [0, V) gives a NaN loss and is never read (the launcher refuses it
// for host arrays; device arrays are not copied back to look).
//
// v1: one block per row, online softmax (Milakov & Gimelshein 2018): one pass
//     keeps a running max m and sum d, each element folded in by the combining
//     rule, two expf per element (the rescale e^(m_old - m) and e^(x - m)); then
//     the threads' pairs are combined across the block.
// v2: the same pass with one expf per element: a thread takes 16 columns, their
//     max first, rescales d once if that max is new (rare after the first few),
//     then adds 16 independent exponentials (instruction-level parallelism where
//     v1 made each element wait for the last).
// v3: v2 over float4 loads. A row starts at r * V floats, on 16 bytes only when
//     4 | r * V; with V = 50,257 (odd) the rows take all four offsets in turn. So
//     each row is cut where its own address allows: a head of 0 to 3 floats up to
//     the first 16-byte boundary, an aligned body of float4s, a tail of 0 to 3.
//
// expf throughout (within 2 ulp on a GPU): __expf's error grows with |x|. Blocks
// are whole warps: the shuffles read all 32 lanes.

constexpr unsigned FULL = 0xffffffffu;

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

// Two pairs become one, each sum rescaled to the larger max. One element x is the
// pair (x, 1). With m = +inf the pair's own term is e^(inf - inf): NaN, as meant.
__device__ __forceinline__ MD md_combine(MD a, MD b) {
    float m = fmaxf(a.m, b.m);
    return {m, a.d * exp_from(a.m, m) + b.d * exp_from(b.m, m)};
}

// md_combine is commutative, bit for bit, so every lane ends with the same pair.
__device__ __forceinline__ MD warp_md(MD v) {
    for (int offset = 16; offset > 0; offset /= 2) {
        MD other = {__shfl_xor_sync(FULL, v.m, offset),
                    __shfl_xor_sync(FULL, v.d, offset)};
        v = md_combine(v, other);
    }
    return v;
}

__device__ __forceinline__ MD block_md(MD v) {
    __shared__ MD partial[32];  // one per warp
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_md(v);
    if (lane == 0) {
        partial[warp] = v;
    }
    __syncthreads();
    v = lane < blockDim.x / 32 ? partial[lane] : MD{-INFINITY, 0.0f};
    return warp_md(v);
}

// The row's two outputs from its (m, d), by one thread. NaN for a bad target.
__device__ __forceinline__ void finish_row(MD md, const float* xr, const int* targets,
                                           float* loss, float* lse, int r, int V) {
    int t = targets[r];
    float log_d = logf(md.d);
    lse[r] = md.m + log_d;
    loss[r] = 0 <= t && t < V ? (md.m - xr[t]) + log_d : NAN;
}
// --8<-- [end:online]

// --8<-- [start:cross-entropy-v1]
extern "C" __global__ void cross_entropy_v1(const float* x, const int* targets,
                                            float* loss, float* lse, int rows, int V) {
    const float* xr = x + (size_t)blockIdx.x * V;  // this block's row
    MD md = {-INFINITY, 0.0f};
    for (int k = threadIdx.x; k < V; k += blockDim.x) {
        md = md_combine(md, {xr[k], 1.0f});
    }
    md = block_md(md);
    if (threadIdx.x == 0) {
        finish_row(md, xr, targets, loss, lse, blockIdx.x, V);
    }
}
// --8<-- [end:cross-entropy-v1]

// --8<-- [start:fold]
constexpr int CHUNK = 16;  // columns a thread folds into (m, d) at a time

// CHUNK values into (m, d): their max, one rescale if it is new, then CHUNK
// exponentials that do not wait for each other. -inf pads a short chunk (adds 0).
// fmaxf skips NaN, but a NaN's own term e^(NaN - m) still makes d NaN.
__device__ __forceinline__ MD fold(MD md, const float (&v)[CHUNK]) {
    float c = v[0];
#pragma unroll
    for (int j = 1; j < CHUNK; ++j) {
        c = fmaxf(c, v[j]);
    }
    if (c > md.m) {
        md.d *= exp_from(md.m, c);
        md.m = c;
    }
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < CHUNK; ++j) {
        s += exp_from(v[j], md.m);
    }
    md.d += s;
    return md;
}
// --8<-- [end:fold]

// --8<-- [start:cross-entropy-v2]
extern "C" __global__ void cross_entropy_v2(const float* x, const int* targets,
                                            float* loss, float* lse, int rows, int V) {
    const float* xr = x + (size_t)blockIdx.x * V;
    MD md = {-INFINITY, 0.0f};
    int step = CHUNK * blockDim.x;
    for (int k0 = threadIdx.x; k0 < V; k0 += step) {
        float v[CHUNK];
#pragma unroll
        for (int j = 0; j < CHUNK; ++j) {  // column k0 + j * block: coalesced
            int k = k0 + j * blockDim.x;
            v[j] = k < V ? xr[k] : -INFINITY;
        }
        md = fold(md, v);
    }
    md = block_md(md);
    if (threadIdx.x == 0) {
        finish_row(md, xr, targets, loss, lse, blockIdx.x, V);
    }
}
// --8<-- [end:cross-entropy-v2]

// --8<-- [start:row-split]
// The floats of a row before its first 16-byte boundary (0 to 3, at most V), and
// the float4s after them: the row's aligned body. The rest (0 to 3) is its tail.
struct RowSplit {
    int head, n4;
};

__device__ __forceinline__ RowSplit split_row(const float* row, int V) {
    int head = (int)((16 - (size_t)row % 16) % 16) / 4;  // rows are 4-byte aligned
    head = min(head, V);
    return {head, (V - head) / 4};
}
// --8<-- [end:row-split]

// --8<-- [start:cross-entropy-v3]
extern "C" __global__ void cross_entropy_v3(const float* x, const int* targets,
                                            float* loss, float* lse, int rows, int V) {
    const float* xr = x + (size_t)blockIdx.x * V;
    RowSplit s = split_row(xr, V);
    const float4* body = reinterpret_cast<const float4*>(xr + s.head);
    int tail = s.head + 4 * s.n4;  // first column past the body
    MD md = {-INFINITY, 0.0f};
    float v[CHUNK];
    // head and tail: at most 3 + 3 floats, one chunk of thread 0..3's registers
#pragma unroll
    for (int j = 0; j < CHUNK; ++j) {
        v[j] = -INFINITY;
    }
    if (threadIdx.x < s.head) {
        v[0] = xr[threadIdx.x];
    }
    if (tail + threadIdx.x < V) {
        v[1] = xr[tail + threadIdx.x];
    }
    md = fold(md, v);
    const float4 none = make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
    int step = (CHUNK / 4) * blockDim.x;  // float4s per block per chunk
    for (int i0 = threadIdx.x; i0 < s.n4; i0 += step) {
#pragma unroll
        for (int p = 0; p < CHUNK / 4; ++p) {  // four 16-byte loads in flight
            int i = i0 + p * blockDim.x;
            float4 f = i < s.n4 ? body[i] : none;
            v[4 * p] = f.x, v[4 * p + 1] = f.y, v[4 * p + 2] = f.z, v[4 * p + 3] = f.w;
        }
        md = fold(md, v);
    }
    md = block_md(md);
    if (threadIdx.x == 0) {
        finish_row(md, xr, targets, loss, lse, blockIdx.x, V);
    }
}
// --8<-- [end:cross-entropy-v3]
