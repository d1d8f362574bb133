// attention_decode: one step of generation with a key-value cache. Each (b, h) has
// one new query q (its row of d floats) and a cache of Tmax key and value rows of
// which the first `length` are filled (kv_append.cu wrote them, the new token's
// own last); o = softmax(q k[:length]^T / sqrt(d)) v[:length]. No mask: the new
// token sees every earlier token and itself. A (1 x length) row of scores per
// head: no matrix product to tile, every key and value is read once and used for
// 2 d flops, so the kernel is a stream of 2 length d floats per head through DRAM,
// and the copy kernel is the speed to reach. d is a multiple of 4 up to 128.
//
// Both versions read the cache with float4 loads by lanes in groups of G = d / 4
// (rounded up to a power of two): lane c of a group holds columns 4c .. 4c + 3 of
// the group's key and value rows, so the 32 / G groups of a warp read 32 / G whole
// consecutive rows per load: 512 contiguous bytes at d = 64 or 128. A score is the
// group's partial dot products summed by log2 G shuffles. Each lane keeps an
// online-softmax state of its group's keys (the running max m, the sum l of
// 2^(s - m) and the float4 acc of the weighted values, rescaled when m grows) and
// has U = 8 keys' rows in flight per step; at the end the groups' states merge by
// xor shuffles: (m, l, acc) and (m', l', acc') make (max, l 2^(m - max) + l'
// 2^(m' - max), acc 2^(m - max) + acc' 2^(m' - max)), in any order.
//
// v1: one warp per (b, h), a block of block / 32 heads. Simple, and enough when
//     B H is large: at GPT-2 small's decode for 32 sequences, 384 warps; but each
//     warp streams its head alone, and with B H = 12 (one sequence) 12 warps leave
//     most of the GPU idle, however long the cache.
// v2: Flash-Decoding (Dao, Haziza, Massa and Sizov 2023): the keys of each (b, h)
//     split into chunks, one block per (chunk, h, b), so that a few heads still
//     fill every SM. The block's warps take turns over the chunk's steps and merge
//     their states through shared memory; each block writes its state to a scratch
//     buffer, and the last block of a head to finish (a counter per head, an
//     atomicAdd after a __threadfence) merges them all, in chunk order, and writes
//     o. With one chunk it writes o at once. The launcher picks the chunks: about
//     8 blocks per SM of a 132-SM GPU, at least 64 keys each.
//
// Both work in base 2: q is multiplied by log2(e) / sqrt(d) once, so each
// exponential is an exp2f, as in attention.cu. A state that has seen no key yet has
// m = -inf; its exponents are taken against 0 instead, so that no -inf - (-inf)
// makes a NaN.

constexpr unsigned FULL = 0xffffffffu;
constexpr int U = 8;  // keys per lane per step: 2 U float4 loads in flight

struct State {
    float m, l;  // the running max of the scores (base 2) and the sum of 2^(s - m)
    float4 acc;  // sum of 2^(s - m) v over the lane's 4 columns
};

__device__ __forceinline__ float4 zero4() {
    return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

__device__ __forceinline__ float4 load4(const float* p) {
    return *reinterpret_cast<const float4*>(p);
}

// a * x + b * y, per component
__device__ __forceinline__ float4 mix4(float4 a, float x, float4 b, float y) {
    return make_float4(fmaf(a.x, x, b.x * y), fmaf(a.y, x, b.y * y),
                       fmaf(a.z, x, b.z * y), fmaf(a.w, x, b.w * y));
}

__device__ __forceinline__ State empty_state() {
    return State{-INFINITY, 0.0f, zero4()};
}

// The exponent's origin for a state whose max is m: m, or 0 while m is -inf.
__device__ __forceinline__ float origin(float m) {
    return m == -INFINITY ? 0.0f : m;
}

// Fold state b into a.
__device__ __forceinline__ void combine(State& a, const State& b) {
    float m = fmaxf(a.m, b.m), o = origin(m);
    float x = exp2f(a.m - o), y = exp2f(b.m - o);
    a.l = fmaf(a.l, x, b.l * y);
    a.acc = mix4(a.acc, x, b.acc, y);
    a.m = m;
}

// The largest power of two a group needs: G >= d / 4 lanes (d % 4 == 0, d <= 128).
__device__ __forceinline__ int group_lanes(int d) {
    int g = 1;
    while (4 * g < d) {
        g *= 2;
    }
    return g;
}

// --8<-- [start:scan]
// One warp's pass over keys of one head: steps of 32 / G * U consecutive keys
// starting at `first`, then first + stride, ... while below `last` (first, last and
// stride the same for every lane, so the loop and its shuffles are warp-uniform).
// Keys at or past `last` are neither loaded nor counted: past `length` the cache
// holds anything. q4 is the lane's float4 of q, already times log2(e) / sqrt(d).
template <int G>
__device__ __forceinline__ void scan(State& st, float4 q4, const float* kh,
                                     const float* vh, int d, int first, int last,
                                     int stride) {
    constexpr int KPW = 32 / G;  // keys side by side in a warp
    int lane = threadIdx.x % 32, g = lane / G, c = lane % G;
    bool col = 4 * c < d;  // lanes past d / 4 (d not a power of two) hold zeros
    for (int base = first; base < last; base += stride) {
        float4 kr[U], vr[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {  // every load first: 2 U in flight
            int t = base + u * KPW + g;
            bool ok = t < last && col;
            kr[u] = ok ? load4(kh + (size_t)t * d + 4 * c) : zero4();
            vr[u] = ok ? load4(vh + (size_t)t * d + 4 * c) : zero4();
        }
        float s[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            s[u] = q4.x * kr[u].x + q4.y * kr[u].y + q4.z * kr[u].z + q4.w * kr[u].w;
        }
#pragma unroll
        for (int o = G / 2; o > 0; o /= 2) {  // the group's sum, U keys interleaved
#pragma unroll
            for (int u = 0; u < U; ++u) {
                s[u] += __shfl_xor_sync(FULL, s[u], o);
            }
        }
        float m = st.m;
#pragma unroll
        for (int u = 0; u < U; ++u) {
            s[u] = base + u * KPW + g < last ? s[u] : -INFINITY;
            m = fmaxf(m, s[u]);
        }
        float ref = origin(m), alpha = exp2f(st.m - ref);  // 0 before the first key
        st.l *= alpha;
        st.acc = mix4(st.acc, alpha, zero4(), 0.0f);
#pragma unroll
        for (int u = 0; u < U; ++u) {
            float p = exp2f(s[u] - ref);  // 0 for a key past `last`
            st.l += p;
            st.acc = mix4(vr[u], p, st.acc, 1.0f);
        }
        st.m = m;
    }
}

// The warp's 32 / G group states merged: after it every lane of column c holds
// the warp's state for columns 4c .. 4c + 3.
template <int G>
__device__ __forceinline__ void merge_groups(State& st) {
#pragma unroll
    for (int o = G; o < 32; o *= 2) {
        State other;
        other.m = __shfl_xor_sync(FULL, st.m, o);
        other.l = __shfl_xor_sync(FULL, st.l, o);
        other.acc.x = __shfl_xor_sync(FULL, st.acc.x, o);
        other.acc.y = __shfl_xor_sync(FULL, st.acc.y, o);
        other.acc.z = __shfl_xor_sync(FULL, st.acc.z, o);
        other.acc.w = __shfl_xor_sync(FULL, st.acc.w, o);
        combine(st, other);
    }
}

// Lane c's float4 of q (zeros past d), times c2 = log2(e) / sqrt(d).
__device__ __forceinline__ float4 query4(const float* qh, int c, int d, float c2) {
    float4 q = 4 * c < d ? load4(qh + 4 * c) : zero4();
    return make_float4(q.x * c2, q.y * c2, q.z * c2, q.w * c2);
}

// o's columns 4c .. 4c + 3 from a merged state (l >= 1: the max's own term is 1).
__device__ __forceinline__ void write4(float* oh, int c, int d, const State& st) {
    if (4 * c < d) {
        float inv = 1.0f / st.l;
        *reinterpret_cast<float4*>(oh + 4 * c) = mix4(st.acc, inv, zero4(), 0.0f);
    }
}
// --8<-- [end:scan]

// --8<-- [start:attention-decode-v1]
template <int G>
__device__ __forceinline__ void decode_v1(const float* q, const float* k,
                                          const float* v, float* o, int head, int T,
                                          int d, int length, float c2) {
    int lane = threadIdx.x % 32;
    size_t rows = (size_t)head * T * d;  // the head's row 0 in the caches
    State st = empty_state();
    float4 q4 = query4(q + (size_t)head * d, lane % G, d, c2);
    scan<G>(st, q4, k + rows, v + rows, d, 0, length, 32 / G * U);
    merge_groups<G>(st);
    if (lane < G) {
        write4(o + (size_t)head * d, lane, d, st);
    }
}

// q, o (heads, d) and k, v (heads, T, d): heads = B H; a warp per head.
extern "C" __global__ void attention_decode_v1(const float* q, const float* k,
                                               const float* v, float* o, int heads,
                                               int T, int d, int length, float c2) {
    int head = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (head >= heads) {
        return;  // a whole warp: the shuffles see only full warps
    }
    switch (group_lanes(d)) {
        case 1: decode_v1<1>(q, k, v, o, head, T, d, length, c2); break;
        case 2: decode_v1<2>(q, k, v, o, head, T, d, length, c2); break;
        case 4: decode_v1<4>(q, k, v, o, head, T, d, length, c2); break;
        case 8: decode_v1<8>(q, k, v, o, head, T, d, length, c2); break;
        case 16: decode_v1<16>(q, k, v, o, head, T, d, length, c2); break;
        default: decode_v1<32>(q, k, v, o, head, T, d, length, c2);
    }
}
// --8<-- [end:attention-decode-v1]

// --8<-- [start:attention-decode-v2]
// Each block's state for its chunk, `slots` = B H chunks of them: acc (slots, d),
// then m (slots), then l (slots). Volatile reads: the last block reads what other
// blocks wrote during this launch, which its L1 must not answer from a stale line.
__device__ __forceinline__ State read_partial(const float* part, int slots, int d,
                                              size_t slot, int c) {
    const volatile float* p = part;
    const volatile float* a = p + slot * d + 4 * c;
    State st;
    st.m = p[(size_t)slots * d + slot];
    st.l = p[(size_t)slots * (d + 1) + slot];
    st.acc = 4 * c < d ? make_float4(a[0], a[1], a[2], a[3]) : zero4();
    return st;
}

template <int G>
__device__ __forceinline__ void decode_v2(const float* q, const float* k,
                                          const float* v, float* o, float* part,
                                          unsigned* count, int H, int T, int d,
                                          int length, int chunk, float c2, float* smem,
                                          int* last_block) {
    int chunks = gridDim.x, ch = blockIdx.x, head = blockIdx.z * H + blockIdx.y;
    int warps = blockDim.x / 32, w = threadIdx.x / 32, lane = threadIdx.x % 32;
    constexpr int STEP = 32 / G * U;
    size_t rows = (size_t)head * T * d;
    int first = ch * chunk, last = min(length, first + chunk);  // never empty
    State st = empty_state();
    float4 q4 = query4(q + (size_t)head * d, lane % G, d, c2);
    scan<G>(st, q4, k + rows, v + rows, d, first + w * STEP, last, warps * STEP);
    merge_groups<G>(st);
    // the block's warps: acc (warps, 32) float4s, then m and l (warps) each
    float4* s_acc = reinterpret_cast<float4*>(smem);
    float* s_m = smem + 4 * 32 * warps;
    float* s_l = s_m + warps;
    if (lane < G) {
        s_acc[w * 32 + lane] = st.acc;
    }
    if (lane == 0) {
        s_m[w] = st.m;
        s_l[w] = st.l;
    }
    __syncthreads();
    if (w == 0 && lane < G) {
        st = State{s_m[0], s_l[0], s_acc[lane]};
        for (int j = 1; j < warps; ++j) {
            combine(st, State{s_m[j], s_l[j], s_acc[j * 32 + lane]});
        }
        if (chunks == 1) {
            write4(o + (size_t)head * d, lane, d, st);
        }
    }
    if (chunks == 1) {
        return;
    }
    int slots = gridDim.z * H * chunks;
    size_t slot = (size_t)head * chunks + ch;
    if (w == 0 && lane < G) {
        if (4 * lane < d) {
            *reinterpret_cast<float4*>(part + slot * d + 4 * lane) = st.acc;
        }
        if (lane == 0) {
            part[(size_t)slots * d + slot] = st.m;
            part[(size_t)slots * (d + 1) + slot] = st.l;
        }
        __threadfence();  // the state is visible to every block before the count
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        *last_block = atomicAdd(count + head, 1u) == (unsigned)chunks - 1;
    }
    __syncthreads();
    if (!*last_block) {
        return;
    }
    __threadfence();  // the counts before the states: read nothing from before them
    if (w == 0 && lane < G) {  // every chunk of the head is in: merge, in order
        State all = read_partial(part, slots, d, (size_t)head * chunks, lane);
        for (int j = 1; j < chunks; ++j) {
            combine(all, read_partial(part, slots, d, (size_t)head * chunks + j, lane));
        }
        write4(o + (size_t)head * d, lane, d, all);
    }
    if (threadIdx.x == 0) {
        count[head] = 0;  // ready for the next launch
    }
}

// Grid (chunks, H, B); block: warps of 32. part: the chunks' states (see
// read_partial); count: B H counters, zero before and after each launch. Shared
// memory: 4 32 + 2 floats per warp (the launcher sizes it).
extern "C" __global__ void attention_decode_v2(const float* q, const float* k,
                                               const float* v, float* o, float* part,
                                               unsigned* count, int H, int T, int d,
                                               int length, int chunk, float c2) {
    extern __shared__ __align__(16) float smem[];
    __shared__ int last_block;
    switch (group_lanes(d)) {
        case 1:
            decode_v2<1>(q, k, v, o, part, count, H, T, d, length, chunk, c2, smem,
                         &last_block);
            break;
        case 2:
            decode_v2<2>(q, k, v, o, part, count, H, T, d, length, chunk, c2, smem,
                         &last_block);
            break;
        case 4:
            decode_v2<4>(q, k, v, o, part, count, H, T, d, length, chunk, c2, smem,
                         &last_block);
            break;
        case 8:
            decode_v2<8>(q, k, v, o, part, count, H, T, d, length, chunk, c2, smem,
                         &last_block);
            break;
        case 16:
            decode_v2<16>(q, k, v, o, part, count, H, T, d, length, chunk, c2, smem,
                          &last_block);
            break;
        default:
            decode_v2<32>(q, k, v, o, part, count, H, T, d, length, chunk, c2, smem,
                          &last_block);
    }
}
// --8<-- [end:attention-decode-v2]
