// warp_tiled.cuh: the warp-tiled product of B9's sgemm, C = A B over k in
// [k_begin, k_end), written once for any operands that can hand over four
// consecutive elements: A.load4(row, k) gives A[row][k..k+3], B.load4(k, col) gives
// B[k][col..col+3], both zeros outside the operand, and C.store4(row, col, v) keeps
// what lies inside C. sgemm's operands are plain row-major matrices (MatrixLoad,
// MatrixStore below); B11's convolutions gather A from an image as they go
// (implicit GEMM, conv.cu), on the same tiling.

#pragma once

// Rows of `ld` floats from p all start on 16-byte boundaries (a group's slice of
// columns may not, even when ld is a multiple of 4).
__device__ __forceinline__ bool aligned(const float* p, int ld) {
    return (ld & 3) == 0 && (reinterpret_cast<size_t>(p) & 15) == 0;
}

// A rows x cols row-major float32 matrix; `ld` floats from one row to the next
// (cols for a whole matrix, more for a slice of columns). One 16-byte access when
// the four lie inside and every row starts on a 16-byte boundary; else four.
struct MatrixLoad {
    const float* p;
    int rows, cols, ld;
    __device__ __forceinline__ float4 load4(int r, int c) const {
        if (r < rows && c + 3 < cols && aligned(p, ld)) {
            return *reinterpret_cast<const float4*>(p + (size_t)r * ld + c);
        }
        float4 v;
        float* e = reinterpret_cast<float*>(&v);
        for (int j = 0; j < 4; ++j) {
            e[j] = (r < rows && c + j < cols) ? p[(size_t)r * ld + c + j] : 0.0f;
        }
        return v;
    }
};

struct MatrixStore {
    float* p;
    int rows, cols, ld;
    __device__ __forceinline__ void store4(int r, int c, float4 v) const {
        if (r >= rows) return;
        if (c + 3 < cols && aligned(p, ld)) {
            *reinterpret_cast<float4*>(p + (size_t)r * ld + c) = v;
            return;
        }
        const float* e = reinterpret_cast<const float*>(&v);
        for (int j = 0; j < 4; ++j) {
            if (c + j < cols) p[(size_t)r * ld + c + j] = e[j];
        }
    }
};

// --8<-- [start:warp-tiled]
// BM x BN block tile, BK deep, warps of WM x WN, each thread MI x NI patches of
// TM x TN; SWZ swizzles A^T's columns, DBUF double-buffers the tiles. A_KMAJOR:
// A.load4(row, k) hands over A[row..row+3][k] (four rows, one k) instead, for an
// operand whose rows are its contiguous direction (a filter gradient's taps):
// stored as it comes, no transpose.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int NI, bool SWZ,
          bool DBUF, bool A_KMAJOR = false, class ALoad, class BLoad, class CStore>
__device__ __forceinline__ void warp_tiled_gemm(const ALoad& A, const BLoad& B,
                                                const CStore& C, int k_begin,
                                                int k_end) {
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
            ra[l] = A_KMAJOR ? A.load4(row0 + f % (BM / 4) * 4, k0 + f / (BM / 4))
                             : A.load4(row0 + f / (BK / 4), k0 + f % (BK / 4) * 4);
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            int f = tid + l * THREADS;
            rb[l] = B.load4(k0 + f / (BN / 4), col0 + f % (BN / 4) * 4);
        }
    };
    auto stash = [&](int s) {  // registers -> shared buffer s
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            int f = tid + l * THREADS;
            if (A_KMAJOR) {  // four rows of one k: a whole float4 of A^T
                int k = f / (BM / 4), r = f % (BM / 4) * 4;
                *reinterpret_cast<float4*>(&AsT[s][k][col(k, r)]) = ra[l];
                continue;
            }
            int r = f / (BK / 4), k = f % (BK / 4) * 4;
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
    fetch(k_begin);
    stash(0);
    __syncthreads();
    int s = 0;  // the buffer being read
    for (int k0 = k_begin; k0 < k_end; k0 += BK) {
        bool more = k0 + BK < k_end;
        if (more) fetch(k0 + BK);  // in flight while we compute below
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
            if (more) stash(s ^ 1);
            __syncthreads();
            s ^= 1;
        } else {  // wait for every reader before overwriting the only buffer
            __syncthreads();
            if (more) stash(0);
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
                    C.store4(r, c, make_float4(p[0], p[1], p[2], p[3]));
                }
            }
        }
    }
}
// --8<-- [end:warp-tiled]
