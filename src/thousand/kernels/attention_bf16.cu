// attention_bf16: o = softmax(q k^T / sqrt(d) [+ causal mask]) v on tensor cores, the
// FlashAttention-2 forward (Dao 2023, arXiv:2307.08691) in bfloat16. q, k, v, o are
// (B, H, T, d) bf16, C order, d = 64 or 128; the scores, the softmax statistics and
// the accumulator stay in float32 registers; lse (B, H, T) float32, when given, gets
// each row's natural log-sum-exp of the scaled scores, as the backward needs.
//
// v1: 4 warps, a tile of 64 queries per block, each warp owning 16 of them. Q's tile
//     waits in shared memory; K and V tiles of 64 keys stream through it by cp.async,
//     V_j landing while S = Q K_j^T is computed and K_{j+1} while P V_j is. Both
//     products are mma.sync m16n8k16 (bf16 in, float32 accumulate), fed by ldmatrix.
//     P never leaves registers: an m16n8 accumulator tile of S, packed to bf16, is
//     exactly half of the A fragment that P V needs. Causal blocks skip the key
//     tiles above the diagonal and are scheduled longest rows first.
// v2: each warp owns 32 queries (128 a block), so every K or V fragment loaded from
//     shared memory feeds two mma instead of one. 255 registers a thread (a few
//     spilled to L1), 2 blocks an SM: on an H200 at B=4, H=32, T=4,096, d=128 this
//     ran at 306 TFLOP/s where v1 ran at 269 and 8 warps of 16 queries at 241-269.
//
// Shared-memory rows are padded by 8 bf16 (16 bytes), so the 8 rows an ldmatrix
// phase reads start in 8 different groups of 4 banks: conflict-free.

#include <cuda_bf16.h>

#ifndef THOUSAND_ON_CPU  // mma.sync, ldmatrix and cp.async: the GPU only

typedef __nv_bfloat16 bf16;

// Everything below needs sm_80 (bf16 mma.sync, cp.async); an older GPU's pass skips
// it, and the kernels then hold only a trap.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800

constexpr int BC = 64;  // keys per tile
constexpr int PAD = 8;  // bf16 per shared row past d
constexpr float LOG2E = 1.4426950408889634f;
constexpr float LN2 = 0.6931471805599453f;

// --8<-- [start:ptx]
__device__ __forceinline__ unsigned shared_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared without passing through registers; `bytes` = 0 fills the
// 16 bytes with zeros (a row past T) and reads nothing.
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int bytes) {
    asm volatile(
        "cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_addr(dst)),
        "l"(src), "r"(bytes));
}
__device__ __forceinline__ void cp_async_commit() {
    asm volatile("cp.async.commit_group;\n" ::);
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {  // all but the N newest groups landed
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Four 8 x 8 bf16 matrices from shared memory, one row address per lane (lanes 8i to
// 8i + 7 give matrix i's rows); lane l receives row l / 4, columns 2(l % 4), +1 of
// each. .trans hands out the transposed matrices instead.
__device__ __forceinline__ void ldmatrix_x4(unsigned r[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned r[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_addr(p)));
}

// c (16 x 8, float32) += a (16 x 16, bf16, row) * b (16 x 8, bf16, col)
__device__ __forceinline__ void mma_bf16(float c[4], const unsigned a[4], unsigned b0,
                                         unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// --8<-- [end:ptx]

__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
    __nv_bfloat162 p = __floats2bfloat162_rn(lo, hi);  // lo in the low half
    return *reinterpret_cast<unsigned*>(&p);
}

// Rows row0 .. row0 + ROWS - 1 of a (T, D) head into a padded shared tile; rows past T
// come in as zeros (their scores are masked, their values multiply a zero P).
template <int D, int THREADS, int ROWS>
__device__ __forceinline__ void load_tile(bf16 (*s)[D + PAD], const bf16* g, int row0,
                                          int T) {
    constexpr int CHUNKS = D / 8;  // 16-byte pieces per row
#pragma unroll
    for (int c = threadIdx.x; c < ROWS * CHUNKS; c += THREADS) {
        int r = c / CHUNKS, col = (c % CHUNKS) * 8;
        bool inside = row0 + r < T;
        cp_async16(&s[r][col], g + (size_t)(inside ? row0 + r : 0) * D + col,
                   inside ? 16 : 0);
    }
}

// The largest of the four lanes that share a row (lanes 4g .. 4g + 3).
__device__ __forceinline__ float quad_max(float x) {
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
    return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
    x += __shfl_xor_sync(0xffffffffu, x, 1);
    return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

// --8<-- [start:flash-tc]
// WARPS warps, each owning MT slices of 16 queries: BR = 16 * WARPS * MT queries a
// block. Q's tile sits in shared memory beside one K and one V tile.
template <int D, int WARPS, int MT, bool CAUSAL>
__device__ __forceinline__ void flash_tc(const bf16* q, const bf16* k, const bf16* v,
                                         bf16* o, float* lse, int T, float scale) {
    constexpr int BR = 16 * WARPS * MT, THREADS = 32 * WARPS;
    extern __shared__ __align__(16) unsigned char smem[];
    auto sk = reinterpret_cast<bf16(*)[D + PAD]>(smem);  // (BC, D + PAD)
    auto sv = sk + BC;                                   // (BC, D + PAD)
    auto sq = sv + BC;                                   // (BR, D + PAD)

    // causal: the last query tiles have the most keys, so they go first
    const int tile = CAUSAL ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
    const size_t head = (size_t)blockIdx.y * T * D;  // blockIdx.y = b * H + h
    q += head, k += head, v += head, o += head;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;  // mma fragment coordinates
    const int w0 = warp * 16 * MT;         // the warp's first row in the tile
    const int q0 = tile * BR + w0;         // ... and its query index

    float acc[MT][D / 8][4] = {};   // O, unnormalised: rows g, g + 8
    float m[MT][2], l[MT][2] = {};  // running max (log2 units), sums
#pragma unroll
    for (int i = 0; i < MT; ++i)
        m[i][0] = m[i][1] = -INFINITY;
    const float sl2 = scale * LOG2E;      // exp(x * scale) = exp2(x * sl2)
    const int last = tile * BR + BR - 1;  // the block's last query
    const int tiles = (CAUSAL ? min(T, last + 1) + BC - 1 : T + BC - 1) / BC;

    load_tile<D, THREADS, BR>(sq, q, tile * BR, T);
    load_tile<D, THREADS, BC>(sk, k, 0, T);
    cp_async_commit();
    for (int j = 0; j < tiles; ++j) {
        const int k0 = j * BC;
        load_tile<D, THREADS, BC>(sv, v, k0, T);  // V_j lands while S is computed
        cp_async_commit();
        cp_async_wait<1>();  // Q and K_j have landed
        __syncthreads();

        float s[MT][BC / 8][4] = {};  // S = Q K_j^T: (16 MT) x 64 a warp
#pragma unroll
        for (int kc = 0; kc < D / 16; ++kc) {
            unsigned qa[MT][4];
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                ldmatrix_x4(qa[i],
                            &sq[w0 + i * 16 + lane % 16][kc * 16 + 8 * (lane / 16)]);
            }
#pragma unroll
            for (int np = 0; np < BC / 16; ++np) {
                unsigned b[4];
                ldmatrix_x4(b, &sk[np * 16 + lane % 8 + 8 * (lane / 16)]
                                  [kc * 16 + 8 * (lane / 8 % 2)]);
#pragma unroll
                for (int i = 0; i < MT; ++i) {  // one B fragment, MT mma
                    mma_bf16(s[i][2 * np], qa[i], b[0], b[1]);
                    mma_bf16(s[i][2 * np + 1], qa[i], b[2], b[3]);
                }
            }
        }
        __syncthreads();             // every warp is done with K_j
        unsigned p[MT][BC / 16][4];  // P = softmax numerators, bf16
        if (j + 1 < tiles) {
            load_tile<D, THREADS, BC>(sk, k, k0 + BC, T);  // K_{j+1} lands during P V_j
        }
        cp_async_commit();  // (empty on the last tile)

#pragma unroll
        for (int i = 0; i < MT; ++i) {
            const int ra = q0 + i * 16 + g, rb = ra + 8;  // this thread's two rows
            // keys past T, and in causal mode keys after the query, get no weight
            if (k0 + BC > T || (CAUSAL && k0 + BC - 1 > q0 + i * 16)) {
#pragma unroll
                for (int n = 0; n < BC / 8; ++n) {
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        int key = k0 + n * 8 + 2 * t + e % 2, row = e < 2 ? ra : rb;
                        if (key >= T || (CAUSAL && key > row)) {
                            s[i][n][e] = -INFINITY;
                        }
                    }
                }
            }
            // online softmax (Milakov & Gimelshein 2018) over the two rows
            float xa = -INFINITY, xb = -INFINITY;
#pragma unroll
            for (int n = 0; n < BC / 8; ++n) {
                xa = fmaxf(xa, fmaxf(s[i][n][0], s[i][n][1]));
                xb = fmaxf(xb, fmaxf(s[i][n][2], s[i][n][3]));
            }
            const float na = fmaxf(m[i][0], quad_max(xa) * sl2);
            const float nb = fmaxf(m[i][1], quad_max(xb) * sl2);
            // a row whose keys so far are all masked keeps max -inf: subtract 0
            const float ba = na == -INFINITY ? 0.0f : na;
            const float bb = nb == -INFINITY ? 0.0f : nb;
            const float fa = exp2f(m[i][0] - ba), fb = exp2f(m[i][1] - bb);
            m[i][0] = na, m[i][1] = nb;
            l[i][0] *= fa, l[i][1] *= fb;
#pragma unroll
            for (int n = 0; n < D / 8; ++n) {  // rescale what the old max weighed
                acc[i][n][0] *= fa, acc[i][n][1] *= fa;
                acc[i][n][2] *= fb, acc[i][n][3] *= fb;
            }
#pragma unroll
            for (int n = 0; n < BC / 8; ++n) {
                float e0 = exp2f(fmaf(s[i][n][0], sl2, -ba));
                float e1 = exp2f(fmaf(s[i][n][1], sl2, -ba));
                float e2 = exp2f(fmaf(s[i][n][2], sl2, -bb));
                float e3 = exp2f(fmaf(s[i][n][3], sl2, -bb));
                l[i][0] += e0 + e1, l[i][1] += e2 + e3;
                // an m16n8 tile of S, in bf16, is half of P's m16k16 A fragment:
                // key tile 2c fills registers 0 and 1, tile 2c + 1 registers 2 and 3
                p[i][n / 2][2 * (n % 2)] = pack_bf16(e0, e1);
                p[i][n / 2][2 * (n % 2) + 1] = pack_bf16(e2, e3);
            }
        }

        cp_async_wait<1>();  // V_j has landed (K_{j+1} may not)
        __syncthreads();
#pragma unroll
        for (int kc = 0; kc < BC / 16; ++kc) {  // O += P V_j
#pragma unroll
            for (int np = 0; np < D / 16; ++np) {
                unsigned b[4];
                ldmatrix_x4_trans(b, &sv[kc * 16 + lane % 8 + 8 * (lane / 8 % 2)]
                                        [np * 16 + 8 * (lane / 16)]);
#pragma unroll
                for (int i = 0; i < MT; ++i) {
                    mma_bf16(acc[i][2 * np], p[i][kc], b[0], b[1]);
                    mma_bf16(acc[i][2 * np + 1], p[i][kc], b[2], b[3]);
                }
            }
        }
        __syncthreads();  // every warp is done with V_j
    }

#pragma unroll
    for (int i = 0; i < MT; ++i) {
        const int ra = q0 + i * 16 + g, rb = ra + 8;
        const float la = quad_sum(l[i][0]), lb = quad_sum(l[i][1]);
        const float ia = 1.0f / la, ib = 1.0f / lb;
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
            int c = n * 8 + 2 * t;
            if (ra < T) {
                *reinterpret_cast<unsigned*>(o + (size_t)ra * D + c) =
                    pack_bf16(acc[i][n][0] * ia, acc[i][n][1] * ia);
            }
            if (rb < T) {
                *reinterpret_cast<unsigned*>(o + (size_t)rb * D + c) =
                    pack_bf16(acc[i][n][2] * ib, acc[i][n][3] * ib);
            }
        }
        if (lse != nullptr && t == 0) {
            float* row = lse + (size_t)blockIdx.y * T;
            if (ra < T) row[ra] = (m[i][0] + log2f(la)) * LN2;
            if (rb < T) row[rb] = (m[i][1] + log2f(lb)) * LN2;
        }
    }
}
// --8<-- [end:flash-tc]

template <int WARPS, int MT>
__device__ __forceinline__ void dispatch(const bf16* q, const bf16* k, const bf16* v,
                                         bf16* o, float* lse, int T, int d, int causal,
                                         float scale) {
    if (d == 64) {
        if (causal)
            flash_tc<64, WARPS, MT, true>(q, k, v, o, lse, T, scale);
        else
            flash_tc<64, WARPS, MT, false>(q, k, v, o, lse, T, scale);
    } else {  // 128: the launcher allows nothing else
        if (causal)
            flash_tc<128, WARPS, MT, true>(q, k, v, o, lse, T, scale);
        else
            flash_tc<128, WARPS, MT, false>(q, k, v, o, lse, T, scale);
    }
}

#endif  // sm_80

// grid (cdiv(T, 16 * WARPS * MT), B * H), block 32 * WARPS, dynamic shared memory
// (BR + 2 * 64) * (d + 8) * 2 bytes. lse may be null.
// --8<-- [start:attention-bf16-v1]
extern "C" __global__ void __launch_bounds__(128)
    attention_bf16_v1(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse,
                      int T, int d, int causal, float scale) {
#if __CUDA_ARCH__ >= 800  // bf16 mma.sync and cp.async: Ampere and later
    dispatch<4, 1>(q, k, v, o, lse, T, d, causal, scale);
#else
    __trap();  // the launcher refuses older GPUs before it gets here
#endif
}
// --8<-- [end:attention-bf16-v1]

// --8<-- [start:attention-bf16-v2]
extern "C" __global__ void __launch_bounds__(128, 2)
    attention_bf16_v2(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse,
                      int T, int d, int causal, float scale) {
#if __CUDA_ARCH__ >= 800  // bf16 mma.sync and cp.async: Ampere and later
    dispatch<4, 2>(q, k, v, o, lse, T, d, causal, scale);
#else
    __trap();  // the launcher refuses older GPUs before it gets here
#endif
}
// --8<-- [end:attention-bf16-v2]

#endif  // THOUSAND_ON_CPU
