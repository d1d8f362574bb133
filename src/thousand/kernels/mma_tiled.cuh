// mma_tiled.cuh: warp_tiled.cuh's product on the tensor cores (TF32 mma.sync
// m16n8k8, as matmul_v8), for the same loader objects: A.load4(row, k),
// B.load4(k, col), C.store4(row, col, v). Tiles go global -> registers -> shared
// memory (rounded to TF32 on the way), double-buffered so that the next tile's loads
// are in flight during this tile's mma instructions. No cp.async here: the tiles
// pass through registers to be rounded to TF32. A gathered operand (a convolution's
// patches) could still use it: each thread gives its own source address, and a
// source size of 0 fills padding with zeros, as attention_bf16.cu does.
// Ampere and later only: the caller guards it with __CUDA_ARCH__ >= 800.

#pragma once

__device__ __forceinline__ float round_tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

// --8<-- [start:mma-tiled]
// BM x BN block tile, BK deep (16 at 128 x 64: two buffers in 30 KiB of static
// shared memory); WARPS_M x WARPS_N warps, each (BM / WARPS_M) x (BN / WARPS_N),
// in 16 x 8 mma tiles. Rows padded (+4, +8 floats) so a warp's fragment reads fall
// in 32 different banks.
template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, class ALoad, class BLoad,
          class CStore>
__device__ __forceinline__ void mma_tiled_gemm(const ALoad& A, const BLoad& B,
                                               const CStore& C, int k_begin,
                                               int k_end) {
    constexpr int THREADS = WARPS_M * WARPS_N * 32;
    constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N, TM = WM / 16, TN = WN / 8;
    constexpr int AP = BK + 4, BP = BN + 8;
    constexpr int A_LOADS = BM * BK / 4 / THREADS, B_LOADS = BK * BN / 4 / THREADS;
    __shared__ __align__(16) float As[2][BM * AP];
    __shared__ __align__(16) float Bs[2][BK * BP];
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int g = lane / 4, t = lane % 4;  // PTX's "group" and "thread in group"
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    int wm = warp / WARPS_N * WM, wn = warp % WARPS_N * WN;
    float4 ra[A_LOADS], rb[B_LOADS];
    auto fetch = [&](int k0) {
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            int f = tid + l * THREADS;
            ra[l] = A.load4(row0 + f / (BK / 4), k0 + f % (BK / 4) * 4);
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            int f = tid + l * THREADS;
            rb[l] = B.load4(k0 + f / (BN / 4), col0 + f % (BN / 4) * 4);
        }
    };
    auto stash = [&](int s) {  // rounded to TF32 once here, not at every read
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            int f = tid + l * THREADS;
            float4 v = ra[l];
            *reinterpret_cast<float4*>(&As[s][f / (BK / 4) * AP + f % (BK / 4) * 4]) =
                make_float4(round_tf32(v.x), round_tf32(v.y), round_tf32(v.z),
                            round_tf32(v.w));
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            int f = tid + l * THREADS;
            float4 v = rb[l];
            *reinterpret_cast<float4*>(&Bs[s][f / (BN / 4) * BP + f % (BN / 4) * 4]) =
                make_float4(round_tf32(v.x), round_tf32(v.y), round_tf32(v.z),
                            round_tf32(v.w));
        }
    };

    float acc[TM][TN][4] = {};
    fetch(k_begin);
    stash(0);
    __syncthreads();
    int s = 0;
    for (int k0 = k_begin; k0 < k_end; k0 += BK) {
        bool more = k0 + BK < k_end;
        if (more) fetch(k0 + BK);
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            unsigned a[TM][4], b[TN][2];
#pragma unroll
            for (int mi = 0; mi < TM; ++mi) {  // A: rows g, g+8; columns t, t+4
                const float* p = &As[s][(wm + mi * 16 + g) * AP + kk + t];
                a[mi][0] = __float_as_uint(p[0]);
                a[mi][1] = __float_as_uint(p[8 * AP]);
                a[mi][2] = __float_as_uint(p[4]);
                a[mi][3] = __float_as_uint(p[8 * AP + 4]);
            }
#pragma unroll
            for (int ni = 0; ni < TN; ++ni) {  // B: rows (k) t, t+4; column g
                const float* p = &Bs[s][(kk + t) * BP + wn + ni * 8 + g];
                b[ni][0] = __float_as_uint(p[0]);
                b[ni][1] = __float_as_uint(p[4 * BP]);
            }
#pragma unroll
            for (int mi = 0; mi < TM; ++mi) {
#pragma unroll
                for (int ni = 0; ni < TN; ++ni) {
                    float* d = acc[mi][ni];
                    asm volatile(
                        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                        : "r"(a[mi][0]), "r"(a[mi][1]), "r"(a[mi][2]), "r"(a[mi][3]),
                          "r"(b[ni][0]), "r"(b[ni][1]));
                }
            }
        }
        if (more) stash(s ^ 1);  // the other buffer: last read before the barrier
        __syncthreads();
        s ^= 1;
    }
    // C fragment: rows g, g+8; columns 2t, 2t+1. Pairs of lanes t, t+1 hold four
    // neighbouring columns: swap halves so each even-t lane stores one float4.
#pragma unroll
    for (int mi = 0; mi < TM; ++mi) {
#pragma unroll
        for (int ni = 0; ni < TN; ++ni) {
            const float* d = acc[mi][ni];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                float x = d[2 * h], y = d[2 * h + 1];
                float nx = __shfl_down_sync(0xffffffff, x, 1);
                float ny = __shfl_down_sync(0xffffffff, y, 1);
                if ((t & 1) == 0) {
                    int r = row0 + wm + mi * 16 + g + 8 * h;
                    int c = col0 + wn + ni * 8 + 2 * t;
                    C.store4(r, c, make_float4(x, y, nx, ny));
                }
            }
        }
    }
}
// --8<-- [end:mma-tiled]
