// sgemm: C = A @ B in float32 on the CUDA cores, B9's last rungs: matmul_v7's warp
// tiling written once as a template over the tile shape (warp_tiled), with A^T's
// columns swizzled in shared memory and two shared buffers, instantiated at two
// shapes. A is M x K, B is K x N, C is M x N, row-major; any M, N, K >= 1.
//
// v1: v7's shape (128 x 128 tiles, 8 warps of 64 x 32, 8 x 8 outputs a thread), with
//     the swizzle and the second buffer: one barrier a tile instead of two.
// v2: 128 x 256 tiles, 8 warps of 64 x 64, 8 x 16 outputs a thread: each value read
//     from shared memory feeds more FMAs. The sweep over shapes that chose it is
//     experiment b9-sgemm-tiles, recorded with the run.

#include "matrix_edges.cuh"

// --8<-- [start:warp-tiled]
// BM x BN block tile, BK deep, warps of WM x WN, each thread MI x NI patches of
// TM x TN; SWZ swizzles A^T's columns, DBUF double-buffers the tiles.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int NI, bool SWZ,
          bool DBUF>
__device__ __forceinline__ void warp_tiled(const float* A, const float* B, float* C,
                                           int M, int N, int K) {
    constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
    constexpr int MI = WM * WN / (32 * TM * TN * NI);
    constexpr int SUBM = WM / MI, SUBN = WN / NI, BUFS = DBUF ? 2 : 1;
    __shared__ __align__(16) float AsT[BUFS][BK][BM];
    __shared__ __align__(16) float Bs[BUFS][BK][BN];
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    int wrow = warp / (BN / WN) * WM, wcol = warp % (BN / WN) * WN;
    int lrow = lane / (SUBN / TN) * TM, lcol = lane % (SUBN / TN) * TN;
    constexpr int A_LOADS = BM * BK / 4 / THREADS, B_LOADS = BK * BN / 4 / THREADS;
    float4 ra[A_LOADS], rb[B_LOADS];
    // The four threads that share a row of A write it down four rows k of A^T at
    // once: XOR-ing the column with 8 x ((k / 4) % 4) puts them in four different
    // banks, and keeps every aligned float4 of a row whole for the reads.
    auto col = [](int k, int c) { return SWZ ? c ^ (((k >> 2) & 3) << 3) : c; };
    auto fetch = [&](int k0) {  // global -> registers
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            int f = tid + l * THREADS;
            ra[l] = load4(A, row0 + f / (BK / 4), k0 + f % (BK / 4) * 4, M, K);
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            int f = tid + l * THREADS;
            rb[l] = load4(B, k0 + f / (BN / 4), col0 + f % (BN / 4) * 4, K, N);
        }
    };
    auto stash = [&](int s) {  // registers -> shared buffer s
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            int f = tid + l * THREADS, r = f / (BK / 4), k = f % (BK / 4) * 4;
            AsT[s][k + 0][col(k + 0, r)] = ra[l].x;
            AsT[s][k + 1][col(k + 1, r)] = ra[l].y;
            AsT[s][k + 2][col(k + 2, r)] = ra[l].z;
            AsT[s][k + 3][col(k + 3, r)] = ra[l].w;
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            int f = tid + l * THREADS;
            *reinterpret_cast<float4*>(&Bs[s][f / (BN / 4)][f % (BN / 4) * 4]) = rb[l];
        }
    };

    float acc[MI * TM][NI * TN] = {};
    float a[MI * TM], b[NI * TN];
    fetch(0);
    stash(0);
    __syncthreads();
    int s = 0;  // the buffer being read
    for (int k0 = 0; k0 < K; k0 += BK) {
        bool more = k0 + BK < K;
        if (more)
            fetch(k0 + BK);  // in flight while we compute below
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
                for (int i = 0; i < TM; i += 4) {
                    int c = col(k, wrow + mi * SUBM + lrow + i);
                    *reinterpret_cast<float4*>(&a[mi * TM + i]) =
                        *reinterpret_cast<const float4*>(&AsT[s][k][c]);
                }
            }
#pragma unroll
            for (int ni = 0; ni < NI; ++ni) {
#pragma unroll
                for (int j = 0; j < TN; j += 4) {
                    int c = wcol + ni * SUBN + lcol + j;
                    *reinterpret_cast<float4*>(&b[ni * TN + j]) =
                        *reinterpret_cast<const float4*>(&Bs[s][k][c]);
                }
            }
#pragma unroll
            for (int i = 0; i < MI * TM; ++i) {
#pragma unroll
                for (int j = 0; j < NI * TN; ++j) {
                    acc[i][j] += a[i] * b[j];
                }
            }
        }
        if (DBUF) {  // fill the other buffer; one barrier before it is read
            if (more)
                stash(s ^ 1);
            __syncthreads();
            s ^= 1;
        } else {  // wait for every reader before overwriting the only buffer
            __syncthreads();
            if (more)
                stash(0);
            __syncthreads();
        }
    }
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
        for (int ni = 0; ni < NI; ++ni) {
#pragma unroll
            for (int i = 0; i < TM; ++i) {
#pragma unroll
                for (int j = 0; j < TN; j += 4) {
                    int r = row0 + wrow + mi * SUBM + lrow + i;
                    int c = col0 + wcol + ni * SUBN + lcol + j;
                    const float* p = &acc[mi * TM + i][ni * TN + j];
                    store4(C, r, c, M, N, make_float4(p[0], p[1], p[2], p[3]));
                }
            }
        }
    }
}
// --8<-- [end:warp-tiled]

// --8<-- [start:sgemm-v1]
extern "C" __global__ void __launch_bounds__(256)
    sgemm_v1(const float* A, const float* B, float* C, int M, int N, int K) {
    warp_tiled<128, 128, 16, 64, 32, 8, 4, 2, true, true>(A, B, C, M, N, K);
}
// --8<-- [end:sgemm-v1]

// --8<-- [start:sgemm-v2]
extern "C" __global__ void __launch_bounds__(256)
    sgemm_v2(const float* A, const float* B, float* C, int M, int N, int K) {
    warp_tiled<128, 256, 16, 64, 64, 8, 4, 4, true, true>(A, B, C, M, N, K);
}
// --8<-- [end:sgemm-v2]
