// wgmma_gemm.cuh: C = A B^T on Hopper's warpgroup tensor cores, the two rungs of the
// matmul_wgmma families (bf16 and TF32), written once for both operand types.
//
// A is M x K and B^T is N x K, both row-major (K-major); C is M x N row-major. Tiles
// arrive by TMA through tensor maps the launcher builds; the tensor map zero-fills
// whatever lies past M, N or K, so only the final stores check bounds.
//
// v1: one warpgroup does everything. Thread 0 asks TMA for the next tile while the
//     warpgroup multiplies the current one (2 stages); a 128 x 128 block tile is two
//     64-row wgmma per k step.
// v2: warp specialisation. A producer warpgroup (one thread of it, really) keeps 4
//     stages of tiles in flight; two consumer warpgroups each own 64 x 256 of a
//     128 x 256 block tile, one wgmma m64n256 per k step. setmaxnreg gives the
//     producer's registers to the consumers, which hold 128 accumulators a thread.

#pragma once
#include <cuda_bf16.h>

#include "wgmma.cuh"

// The 128-byte CUtensorMap the driver fills (cuTensorMapEncodeTiled). The launcher
// keeps A's and B^T's in device memory (maps[0], maps[1]): the copy engine reads them
// from there once each block has fenced them in (see acquire_maps).
struct alignas(64) TensorMap {
    uint64_t opaque[16];
};

// Tensor maps written to device memory by an ordinary copy must be fenced before
// the copy engine (another "proxy") may read them.
__device__ __forceinline__ void acquire_maps(const TensorMap* maps) {
    for (int i = 0; i < 2; ++i) {
        asm volatile(
            "fence.proxy.tensormap::generic.acquire.gpu [%0], 128;\n" ::"l"(&maps[i])
            : "memory");
    }
}

// --8<-- [start:types]
// What changes with the operand type: a 128-byte row holds 64 bf16 or 32 floats, and
// one wgmma consumes 16 or 8 of k.
struct Bf16 {
    typedef __nv_bfloat16 T;
    static constexpr int BK = 64, KSTEP = 16;
    static __device__ __forceinline__ void mma128(float (&d)[64], uint64_t a,
                                                  uint64_t b) {
        wg::wgmma_bf16_n128(d, a, b);
    }
    static __device__ __forceinline__ void mma256(float (&d)[128], uint64_t a,
                                                  uint64_t b) {
        wg::wgmma_bf16_n256(d, a, b);
    }
};
struct Tf32 {
    typedef float T;
    static constexpr int BK = 32, KSTEP = 8;
    static __device__ __forceinline__ void mma128(float (&d)[64], uint64_t a,
                                                  uint64_t b) {
        wg::wgmma_tf32_n128(d, a, b);
    }
    static __device__ __forceinline__ void mma256(float (&d)[128], uint64_t a,
                                                  uint64_t b) {
        wg::wgmma_tf32_n256(d, a, b);
    }
};
// --8<-- [end:types]

__device__ __forceinline__ void store2(float* p, float x, float y) {
    *reinterpret_cast<float2*>(p) = make_float2(x, y);
}
__device__ __forceinline__ void store2(__nv_bfloat16* p, float x, float y) {
    *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(x, y);
}
__device__ __forceinline__ void store1(float* p, float x) {
    *p = x;
}
__device__ __forceinline__ void store1(__nv_bfloat16* p, float x) {
    *p = __float2bfloat16(x);
}

// --8<-- [start:epilogue]
// A warpgroup's 64 x n accumulator: warp w holds rows 16w..16w+15; lane l holds, for
// every 8 columns j, rows l/4 and l/4 + 8 at columns 8j + 2(l%4) and the one after.
template <int REGS, class Out>
__device__ __forceinline__ void store_tile(const float (&d)[REGS], Out* C, int row0,
                                           int col0, int M, int N) {
    int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    int r = row0 + 16 * warp + lane / 4;
#pragma unroll
    for (int j = 0; j < REGS / 4; ++j) {
        int c = col0 + 8 * j + 2 * (lane % 4);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            int rr = r + 8 * h;
            if (rr >= M) continue;
            Out* p = C + (size_t)rr * N + c;
            if (c + 1 < N && (N & 1) == 0) {
                store2(p, d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
            } else {
                if (c < N) store1(p, d[4 * j + 2 * h]);
                if (c + 1 < N) store1(p + 1, d[4 * j + 2 * h + 1]);
            }
        }
    }
}
// --8<-- [end:epilogue]

// Block (tm, tn) of a tiles_m x tiles_n grid from a linear block number, in groups of
// 8 block rows so that blocks running together share tiles of B^T in L2.
__device__ __forceinline__ void grouped(int tiles_m, int tiles_n, int& tm, int& tn) {
    constexpr int G = 8;
    int pid = blockIdx.x, per_group = G * tiles_n;
    int first = pid / per_group * G, rows = min(tiles_m - first, G);
    tm = first + pid % per_group % rows;
    tn = pid % per_group / rows;
}

__device__ __forceinline__ unsigned char* align1024(unsigned char* p) {
    return reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(p) + 1023) &
                                            ~uintptr_t(1023));
}

__device__ __forceinline__ void init_barriers(uint64_t* bars, int n, unsigned count) {
    for (int s = 0; s < n; ++s)
        wg::bar_init(&bars[s], count);
    // make the initialised barriers visible to the copy engine (the async proxy)
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// --8<-- [start:v1]
template <class P, class Out>
__device__ __forceinline__ void gemm_v1(const TensorMap* maps, Out* C, int M, int N,
                                        int K) {
    typedef typename P::T T;
    constexpr int BM = 128, BN = 128, BK = P::BK, STAGES = 2;
    constexpr int A_BYTES = BM * BK * sizeof(T), B_BYTES = BN * BK * sizeof(T);
    extern __shared__ unsigned char raw[];
    unsigned char* smem = align1024(raw);
    __shared__ uint64_t full[STAGES];
    auto As = [&](int s) {
        return reinterpret_cast<T*>(smem + s * (A_BYTES + B_BYTES));
    };
    auto Bs = [&](int s) {
        return reinterpret_cast<T*>(smem + s * (A_BYTES + B_BYTES) + A_BYTES);
    };

    int tm, tn;
    grouped((M + BM - 1) / BM, (N + BN - 1) / BN, tm, tn);
    int m0 = tm * BM, n0 = tn * BN, tiles = (K + BK - 1) / BK;
    bool leader = threadIdx.x == 0;
    if (leader) {
        init_barriers(full, STAGES, 1);
        acquire_maps(maps);
    }
    __syncthreads();
    auto request = [&](int i) {  // tile i of A and B^T into stage i % STAGES
        int s = i % STAGES;
        wg::bar_expect(&full[s], A_BYTES + B_BYTES);
        wg::tma_load(As(s), &maps[0], i * BK, m0, &full[s]);
        wg::tma_load(Bs(s), &maps[1], i * BK, n0, &full[s]);
    };
    if (leader) {
        for (int i = 0; i < STAGES && i < tiles; ++i)
            request(i);
    }
    float acc[2][64] = {};
    for (int i = 0; i < tiles; ++i) {
        int s = i % STAGES;
        wg::bar_wait(&full[s], (i / STAGES) & 1);  // tile i has landed
        wg::fence();
#pragma unroll
        for (int k = 0; k < BK; k += P::KSTEP) {
            uint64_t b = wg::descriptor(Bs(s) + k);
            P::mma128(acc[0], wg::descriptor(As(s) + k), b);            // rows 0-63
            P::mma128(acc[1], wg::descriptor(As(s) + 64 * BK + k), b);  // rows 64-127
        }
        wg::commit();
        wg::wait<0>();  // the tensor cores are done with stage s ...
        if (leader && i + STAGES < tiles) request(i + STAGES);  // ... so refill it
    }
    store_tile(acc[0], C, m0, n0, M, N);
    store_tile(acc[1], C, m0 + 64, n0, M, N);
}
// --8<-- [end:v1]

// --8<-- [start:v2]
template <class P, class Out>
__device__ __forceinline__ void gemm_v2(const TensorMap* maps, Out* C, int M, int N,
                                        int K) {
    typedef typename P::T T;
    constexpr int BM = 128, BN = 256, BK = P::BK, STAGES = 4, CONSUMERS = 2;
    constexpr int A_BYTES = BM * BK * sizeof(T), B_BYTES = BN * BK * sizeof(T);
    extern __shared__ unsigned char raw[];
    unsigned char* smem = align1024(raw);
    __shared__ uint64_t full[STAGES], empty[STAGES];
    auto As = [&](int s) {
        return reinterpret_cast<T*>(smem + s * (A_BYTES + B_BYTES));
    };
    auto Bs = [&](int s) {
        return reinterpret_cast<T*>(smem + s * (A_BYTES + B_BYTES) + A_BYTES);
    };

    int tm, tn;
    grouped((M + BM - 1) / BM, (N + BN - 1) / BN, tm, tn);
    int m0 = tm * BM, n0 = tn * BN, tiles = (K + BK - 1) / BK;
    int group = threadIdx.x / 128;  // warpgroup 0 produces, 1 and 2 consume
    if (threadIdx.x == 0) {
        init_barriers(full, STAGES, 1);
        init_barriers(empty, STAGES, CONSUMERS);
        acquire_maps(maps);
    }
    __syncthreads();
    if (group == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (threadIdx.x == 0) {
            for (int i = 0; i < tiles; ++i) {
                int s = i % STAGES;
                // A fresh barrier counts as having completed the phase before its
                // first: the first round of waits on `empty` passes at once.
                wg::bar_wait(&empty[s], ((i / STAGES) & 1) ^ 1);
                wg::bar_expect(&full[s], A_BYTES + B_BYTES);
                wg::tma_load(As(s), &maps[0], i * BK, m0, &full[s]);
                wg::tma_load(Bs(s), &maps[1], i * BK, n0, &full[s]);
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
        int half = group - 1;  // which 64 rows of the block tile
        float acc[128] = {};
        for (int i = 0; i < tiles; ++i) {
            int s = i % STAGES;
            wg::bar_wait(&full[s], (i / STAGES) & 1);
            wg::fence();
#pragma unroll
            for (int k = 0; k < BK; k += P::KSTEP) {
                P::mma256(acc, wg::descriptor(As(s) + half * 64 * BK + k),
                          wg::descriptor(Bs(s) + k));
            }
            wg::commit();
            wg::wait<0>();
            if (threadIdx.x % 128 == 0) wg::bar_arrive(&empty[s]);  // stage s is free
        }
        store_tile(acc, C, m0 + 64 * half, n0, M, N);
    }
}
// --8<-- [end:v2]
