// attention: o = softmax(q k^T * scale [+ causal mask]) v for every batch and head,
// the scaled dot-product attention of the Transformer (Vaswani et al. 2017,
// arXiv:1706.03762), in float32 on CUDA cores. q, k, v, o are (B, H, T, d), C order;
// scale = 1 / sqrt(d); causal masks key j > query i. d is a multiple of 4 up to 128.
//
// v1: unfused, the memory wall. Per head, S = q k^T by matmul.cu (k transposed by
//     transpose.cu first), into a score matrix of all B * H heads, T x T floats each,
//     in device memory; this kernel then scales S and, when causal, writes -inf
//     above the diagonal, in one launch over every head; softmax.cu normalises each
//     row in place, and o = P v is matmul.cu again. S crosses DRAM six times
//     (written by the matmul, read and written here and by the softmax, read by
//     the second matmul): at T = 4,096 that is 64 MiB per head per pass.
// v2: fused, FlashAttention (Dao et al. 2022, arXiv:2205.14135) with the loop order
//     of FlashAttention-2 (Dao 2023, arXiv:2307.08691): one block per 64 queries of
//     one head; their q rows stay in shared memory while k and v stream past, 64
//     keys at a time, and an online softmax (running max m and sum l per row, the
//     output rescaled by exp(m_old - m_new) when the max grows) accumulates o in
//     registers. The T x T matrix never exists; DRAM sees q, k, v read and o
//     written. Causal blocks skip the key tiles above the diagonal, and start with
//     the longest rows (the last query tiles) so that no long block runs alone at
//     the end. Each of 128 threads owns 8 rows x 4 columns of S and 8 rows x d / 16
//     columns of o (attention_tiles.cuh); lse gets each row's log-sum-exp.
//
// Why a scale-and-mask kernel in v1 rather than a masked softmax: softmax.cu is
// reused as it is, and each step is its own pass over S, which is the lesson: every
// pass is T^2 floats through DRAM, and v2 makes none of them.
//
// v2 works in base 2: the scores are multiplied by scale * log2(e), so each
// exponential is an exp2f (one MUFU.EX2 and no range reduction). That rounds the
// exponent once more, an error of about |x| * 2^-24 relative, small next to the
// float32 dot products over d. lse is converted back to natural log.

#include "attention_tiles.cuh"

constexpr float LOG2E = 1.4426950408889634f;
constexpr float LN2 = 0.6931471805599453f;

// --8<-- [start:attention-v1]
// s: heads score matrices of T x T, each starting head_stride floats after the last.
extern "C" __global__ void attention_v1(float* s, int heads, int T,
                                        long long head_stride, float scale,
                                        int causal) {
    int n = T * T;  // one head's scores: within int (the launcher checks)
    for (int h = blockIdx.y; h < heads; h += gridDim.y) {
        float* sh = s + (size_t)h * head_stride;
        for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < n;
             e += gridDim.x * blockDim.x) {
            int i = e / T, j = e % T;  // query i, key j
            sh[e] = causal && j > i ? -INFINITY : sh[e] * scale;
        }
    }
}
// --8<-- [end:attention-v1]

// --8<-- [start:attention-v2]
constexpr int THREADS2 = 128;
constexpr int RS2 = THREADS2 / 16;  // row groups: a thread owns rows ty + 8 i

// The max and the sum over the 16 threads of a row group (lanes 0-15 or 16-31)
__device__ __forceinline__ float max16(float x) {
    for (int o = 8; o > 0; o /= 2) {
        x = fmaxf(x, __shfl_xor_sync(FULL, x, o));
    }
    return x;
}
__device__ __forceinline__ float sum16(float x) {
    for (int o = 8; o > 0; o /= 2) {
        x += __shfl_xor_sync(FULL, x, o);
    }
    return x;
}

template <int D>
__device__ __forceinline__ void forward(const float* q, const float* k, const float* v,
                                        float* o, float* lse, int H, int T, int d,
                                        float scale, int causal, float* smem) {
    constexpr int LD = D + PAD, LP = TILE + PAD;
    constexpr int TM = TILE / RS2, TN = TILE / 16, TO = D / 16;
    constexpr int KP = TILE * LD > TILE * LP ? TILE * LD : TILE * LP;
    float* Qs = smem;            // (64, LD): the block's queries, all along
    float* Ks = Qs + TILE * LD;  // (64, LD): a key tile; then P (64, LP) over it
    float* Vs = Ks + KP;         // (64, LD): a value tile
    int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
    int tiles = (T + TILE - 1) / TILE;
    int b = blockIdx.x, q0 = (causal ? tiles - 1 - b : b) * TILE;
    size_t head = ((size_t)blockIdx.z * H + blockIdx.y) * T;  // the head's row 0
    const float* kh = k + head * d;
    const float* vh = v + head * d;
    load_tile<D, THREADS2>(Qs, q + head * d, q0, T, d);
    float c2 = scale * LOG2E;  // e^(x scale) = 2^(x scale log2 e)
    float m[TM], l[TM], acc[TM][TO] = {};
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        m[i] = -INFINITY;
        l[i] = 0.0f;  // this thread's share of the row's sum
    }
    int end = causal ? min(T, q0 + TILE) : T;  // keys past the last query: skipped
    for (int kv0 = 0; kv0 < end; kv0 += TILE) {
        __syncthreads();  // the last tile's P and V are read: overwrite them
        load_tile<D, THREADS2>(Ks, kh, kv0, T, d);
        load_tile<D, THREADS2>(Vs, vh, kv0, T, d);
        __syncthreads();
        float s[TM][TN] = {};
        tile_abt<TM, TN, RS2, D>(s, Qs, LD, Ks, LD, ty, tx);  // S = Q K^T
        bool edge = kv0 + TILE > T || (causal && kv0 + TILE - 1 > q0);
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            int query = q0 + ty + RS2 * i;
            float mx = -INFINITY;
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                int key = kv0 + tx + 16 * j;
                bool masked = edge && (key >= T || (causal && key > query));
                s[i][j] = masked ? -INFINITY : s[i][j] * c2;
                mx = fmaxf(mx, s[i][j]);
            }
            // finite: key 0 is in the first tile and masked for no row
            float m_new = fmaxf(m[i], max16(mx));
            float alpha = exp2f(m[i] - m_new);  // 0 on the first tile
            m[i] = m_new;
            float sum = 0.0f;
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                s[i][j] = exp2f(s[i][j] - m_new);  // masked: exp2(-inf) = 0
                sum += s[i][j];
            }
            l[i] = l[i] * alpha + sum;
#pragma unroll
            for (int c = 0; c < TO; ++c) {
                acc[i][c] *= alpha;
            }
        }
        __syncthreads();  // every thread is done with K: P goes where it was
        float* Ps = Ks;
#pragma unroll
        for (int i = 0; i < TM; ++i) {
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                Ps[(ty + RS2 * i) * LP + tx + 16 * j] = s[i][j];
            }
        }
        __syncthreads();
        tile_ab<TM, TO, RS2, TILE>(acc, Ps, LP, Vs, LD, ty, tx);  // O += P V
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        int query = q0 + ty + RS2 * i;
        float total = sum16(l[i]);  // >= 1: the max's own term is 2^0
        if (query < T) {
            float inv = 1.0f / total;
            float* orow = o + (head + query) * d;
#pragma unroll
            for (int c = 0; c < TO; ++c) {
                if (tx + 16 * c < d) {
                    orow[tx + 16 * c] = acc[i][c] * inv;
                }
            }
            if (tx == 0) {
                lse[head + query] = (m[i] + log2f(total)) * LN2;
            }
        }
    }
}

// Shared memory: (64 + 64 + 64) rows of D + 4 floats, D = d rounded up to a power
// of two from 16 (attention.py sizes it): 99 KiB at d = 128, two blocks per SM.
extern "C" __global__ void __launch_bounds__(THREADS2)
    attention_v2(const float* q, const float* k, const float* v, float* o, float* lse,
                 int H, int T, int d, float scale, int causal) {
    extern __shared__ __align__(16) float smem[];
    if (d <= 16) {
        forward<16>(q, k, v, o, lse, H, T, d, scale, causal, smem);
    } else if (d <= 32) {
        forward<32>(q, k, v, o, lse, H, T, d, scale, causal, smem);
    } else if (d <= 64) {
        forward<64>(q, k, v, o, lse, H, T, d, scale, causal, smem);
    } else {
        forward<128>(q, k, v, o, lse, H, T, d, scale, causal, smem);
    }
}
// --8<-- [end:attention-v2]
