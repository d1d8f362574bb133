// attention_backward: the gradients of attention (attention.cu) for an upstream
// gradient do of o, from q, k, v, o and the forward's lse. With S = q k^T * scale
// (masked where causal), P = softmax(S) = exp(S - lse) row by row, per head:
//     dV = P^T dO,   dP = dO V^T,   dS = P * (dP - D),   D = rowsum(dO * O),
//     dQ = dS K * scale,   dK = dS^T Q * scale.
// (D_i = sum_j P_ij dP_ij, the softmax's own backward, which equals dO_i . O_i.)
// Nothing of size T x T is stored: P is recomputed from q, k and lse, as in the
// backward of FlashAttention-2 (Dao 2023, arXiv:2307.08691, Algorithm 2).
//
// v1: one launch, blocks of two kinds, 256 threads each. A key block owns 64 keys of
//     one head: its k and v rows stay in shared memory while every query tile
//     streams past (q, do, lse, D); it recomputes S^T and dP^T for the pair of
//     tiles and adds P^T dO into dV and dS^T Q into dK, both in registers, written
//     once at the end. A query block owns 64 queries and streams the key tiles:
//     S, dP, dS again, and dQ += dS K in registers. FlashAttention-2 instead adds
//     each key block's share of dQ into global memory with float atomics; the
//     second kind of block recomputes S and dP once more (7 products per pair of
//     tiles instead of 5), but every gradient is summed in a fixed order by one
//     thread: the result is the same bit for bit on every run, and no block waits
//     on another. Both kinds compute D for the query tiles they read (a dot
//     product per row, from o and do), so the launch needs no first pass. Causal
//     blocks skip the tiles above the diagonal; the key blocks come first in the
//     grid, longest first, as they do the most work per tile.
//
// Products and tiles as in attention_tiles.cuh (thread (ty, tx) of a 16 x 16 grid
// owns 4 rows x 4 columns of a 64 x 64 tile, 4 rows x d / 16 columns of a
// gradient); the exponentials in base 2, as in attention.cu.

#include "attention_tiles.cuh"

constexpr float LOG2E = 1.4426950408889634f;

constexpr int THREADS = 256;
constexpr int RS = THREADS / 16;  // a thread owns rows ty + 16 i
constexpr int TM = TILE / RS, TN = TILE / 16;

// --8<-- [start:delta]
// Per query row r of the tile at q0: D[r] = do_r . o_r, and lse[r] in base 2, into
// shared memory. Four threads a row (256 threads, 64 rows), added by shuffles.
__device__ __forceinline__ void row_terms(float* Ds, float* Ls, const float* o,
                                          const float* dout, const float* lse, int q0,
                                          int T, int d) {
    int r = threadIdx.x / 4, quarter = threadIdx.x % 4;
    float sum = 0.0f;
    if (q0 + r < T) {
        const float* orow = o + (size_t)(q0 + r) * d;
        const float* drow = dout + (size_t)(q0 + r) * d;
        for (int c = 4 * quarter; c < d; c += 16) {
            float4 a = *reinterpret_cast<const float4*>(orow + c);
            float4 b = *reinterpret_cast<const float4*>(drow + c);
            sum += a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
        }
    }
    sum += __shfl_xor_sync(FULL, sum, 1);
    sum += __shfl_xor_sync(FULL, sum, 2);
    if (quarter == 0) {
        Ds[r] = sum;
        Ls[r] = q0 + r < T ? lse[q0 + r] * LOG2E : 0.0f;
    }
}
// --8<-- [end:delta]

// --8<-- [start:key-block]
// dK and dV of 64 keys at j0 (A layout: Ks, Vs, Qs, dOs, then P^T and dS^T)
template <int D>
__device__ __forceinline__ void key_block(const float* q, const float* k,
                                          const float* v, const float* o,
                                          const float* dout, const float* lse,
                                          float* dk, float* dv, int j0, int T, int d,
                                          float scale, int causal, float* smem) {
    constexpr int LD = D + PAD, LP = TILE + PAD, TO = D / 16;
    float *Ks = smem, *Vs = Ks + TILE * LD, *Qs = Vs + TILE * LD;
    float *dOs = Qs + TILE * LD, *Ps = dOs + TILE * LD, *dSs = Ps + TILE * LP;
    float *Ds = dSs + TILE * LP, *Ls = Ds + TILE;
    int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
    load_tile<D, THREADS>(Ks, k, j0, T, d);
    load_tile<D, THREADS>(Vs, v, j0, T, d);
    float c2 = scale * LOG2E;
    float gk[TM][TO] = {}, gv[TM][TO] = {};
    // queries before j0 see none of these keys when causal
    for (int q0 = causal ? j0 : 0; q0 < T; q0 += TILE) {
        __syncthreads();  // the last query tile is no longer read
        load_tile<D, THREADS>(Qs, q, q0, T, d);
        load_tile<D, THREADS>(dOs, dout, q0, T, d);
        row_terms(Ds, Ls, o, dout, lse, q0, T, d);
        __syncthreads();
        float s[TM][TN] = {}, dp[TM][TN] = {};
        tile_abt<TM, TN, RS, D>(s, Ks, LD, Qs, LD, ty, tx);    // S^T = K Q^T
        tile_abt<TM, TN, RS, D>(dp, Vs, LD, dOs, LD, ty, tx);  // dP^T = V dO^T
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            int key = j0 + ty + RS * i;
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                int col = tx + 16 * j, query = q0 + col;
                bool live = key < T && query < T && !(causal && key > query);
                float p = live ? exp2f(s[i][j] * c2 - Ls[col]) : 0.0f;
                Ps[(ty + RS * i) * LP + col] = p;
                dSs[(ty + RS * i) * LP + col] = p * (dp[i][j] - Ds[col]);
            }
        }
        __syncthreads();
        tile_ab<TM, TO, RS, TILE>(gv, Ps, LP, dOs, LD, ty, tx);  // dV += P^T dO
        tile_ab<TM, TO, RS, TILE>(gk, dSs, LP, Qs, LD, ty, tx);  // dK += dS^T Q
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        int key = j0 + ty + RS * i;
#pragma unroll
        for (int c = 0; c < TO; ++c) {
            int col = tx + 16 * c;
            if (key < T && col < d) {
                dk[(size_t)key * d + col] = gk[i][c] * scale;
                dv[(size_t)key * d + col] = gv[i][c];
            }
        }
    }
}
// --8<-- [end:key-block]

// --8<-- [start:query-block]
// dQ of 64 queries at q0 (the same layout; P^T's place unused)
template <int D>
__device__ __forceinline__ void query_block(const float* q, const float* k,
                                            const float* v, const float* o,
                                            const float* dout, const float* lse,
                                            float* dq, int q0, int T, int d,
                                            float scale, int causal, float* smem) {
    constexpr int LD = D + PAD, LP = TILE + PAD, TO = D / 16;
    float *Ks = smem, *Vs = Ks + TILE * LD, *Qs = Vs + TILE * LD;
    float *dOs = Qs + TILE * LD, *dSs = dOs + TILE * LD + TILE * LP;
    float *Ds = dSs + TILE * LP, *Ls = Ds + TILE;
    int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
    load_tile<D, THREADS>(Qs, q, q0, T, d);
    load_tile<D, THREADS>(dOs, dout, q0, T, d);
    row_terms(Ds, Ls, o, dout, lse, q0, T, d);
    float c2 = scale * LOG2E;
    float gq[TM][TO] = {};
    int end = causal ? min(T, q0 + TILE) : T;  // keys past the last query: skipped
    for (int j0 = 0; j0 < end; j0 += TILE) {
        __syncthreads();  // the last key tile and dS are no longer read
        load_tile<D, THREADS>(Ks, k, j0, T, d);
        load_tile<D, THREADS>(Vs, v, j0, T, d);
        __syncthreads();
        float s[TM][TN] = {}, dp[TM][TN] = {};
        tile_abt<TM, TN, RS, D>(s, Qs, LD, Ks, LD, ty, tx);    // S = Q K^T
        tile_abt<TM, TN, RS, D>(dp, dOs, LD, Vs, LD, ty, tx);  // dP = dO V^T
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            int row = ty + RS * i, query = q0 + row;
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                int key = j0 + tx + 16 * j;
                bool live = key < T && query < T && !(causal && key > query);
                float p = live ? exp2f(s[i][j] * c2 - Ls[row]) : 0.0f;
                dSs[row * LP + tx + 16 * j] = p * (dp[i][j] - Ds[row]);
            }
        }
        __syncthreads();
        tile_ab<TM, TO, RS, TILE>(gq, dSs, LP, Ks, LD, ty, tx);  // dQ += dS K
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        int query = q0 + ty + RS * i;
#pragma unroll
        for (int c = 0; c < TO; ++c) {
            int col = tx + 16 * c;
            if (query < T && col < d) {
                dq[(size_t)query * d + col] = gq[i][c] * scale;
            }
        }
    }
}
// --8<-- [end:query-block]

// --8<-- [start:attention-backward-v1]
template <int D>
__device__ __forceinline__ void backward(const float* q, const float* k, const float* v,
                                         const float* o, const float* dout,
                                         const float* lse, float* grads, int H, int T,
                                         int d, float scale, int causal, float* smem) {
    size_t head = ((size_t)blockIdx.z * H + blockIdx.y) * T;  // the head's row 0
    size_t rows = (size_t)gridDim.z * H * T, at = head * d;
    float* dq = grads + at;  // grads: dq, then dk, then dv, each (B, H, T, d)
    float* dk = grads + rows * d + at;
    float* dv = grads + 2 * rows * d + at;
    q += at, k += at, v += at, o += at, dout += at, lse += head;
    int tiles = (T + TILE - 1) / TILE;
    int b = blockIdx.x;
    if (b < tiles) {  // key blocks, the first (most work when causal) first
        key_block<D>(q, k, v, o, dout, lse, dk, dv, b * TILE, T, d, scale, causal,
                     smem);
    } else {  // query blocks, the last (most work when causal) first
        int q0 = (2 * tiles - 1 - b) * TILE;
        query_block<D>(q, k, v, o, dout, lse, dq, q0, T, d, scale, causal, smem);
    }
}

// Shared memory: 4 tiles of 64 x (D + 4), 2 of 64 x 68 and 128 floats, D = d rounded
// up to a power of two from 16: 167 KiB at d = 128 (attention_backward.py sizes it).
extern "C" __global__ void __launch_bounds__(THREADS)
    attention_backward_v1(const float* q, const float* k, const float* v,
                          const float* o, const float* dout, const float* lse,
                          float* grads, int H, int T, int d, float scale, int causal) {
    extern __shared__ __align__(16) float smem[];
    if (d <= 16) {
        backward<16>(q, k, v, o, dout, lse, grads, H, T, d, scale, causal, smem);
    } else if (d <= 32) {
        backward<32>(q, k, v, o, dout, lse, grads, H, T, d, scale, causal, smem);
    } else if (d <= 64) {
        backward<64>(q, k, v, o, dout, lse, grads, H, T, d, scale, causal, smem);
    } else {
        backward<128>(q, k, v, o, dout, lse, grads, H, T, d, scale, causal, smem);
    }
}
// --8<-- [end:attention-backward-v1]
