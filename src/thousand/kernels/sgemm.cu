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

#include "warp_tiled.cuh"

// The matrices as sgemm takes them: A M x K, B K x N, C M x N, all row-major.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int NI, bool SWZ,
          bool DBUF>
__device__ __forceinline__ void warp_tiled(const float* A, const float* B, float* C,
                                           int M, int N, int K) {
    warp_tiled_gemm<BM, BN, BK, WM, WN, TM, TN, NI, SWZ, DBUF>(
        MatrixLoad{A, M, K, K}, MatrixLoad{B, K, N, N}, MatrixStore{C, M, N, N}, 0, K);
}

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
