// matmul_wgmma_tf32: C = A B^T with float32 operands multiplied as TF32 on Hopper's
// warpgroup tensor cores (float32 accumulate and out), sm_90a only: the rungs of
// wgmma_gemm.cuh on floats. TF32 wgmma reads both operands K-major only.
//
// v1: one warpgroup, TMA and 2 stages, 128 x 128 tiles (wgmma m64n128k8 twice).
// v2: a producer and two consumer warpgroups, 4 stages, 128 x 256 tiles (m64n256k8).

#ifndef THOUSAND_ON_CPU  // TMA and wgmma: nothing the CPU can emulate
#include "wgmma_gemm.cuh"

// --8<-- [start:matmul-wgmma-tf32-v1]
extern "C" __global__ void __launch_bounds__(128)
    matmul_wgmma_tf32_v1(const TensorMap* maps, float* C, int M, int N, int K) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    gemm_v1<Tf32>(maps, C, M, N, K);
#else
    __trap();
#endif
}
// --8<-- [end:matmul-wgmma-tf32-v1]

// --8<-- [start:matmul-wgmma-tf32-v2]
extern "C" __global__ void __launch_bounds__(384, 1)
    matmul_wgmma_tf32_v2(const TensorMap* maps, float* C, int M, int N, int K) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    gemm_v2<Tf32>(maps, C, M, N, K);
#else
    __trap();
#endif
}
// --8<-- [end:matmul-wgmma-tf32-v2]

#endif  // THOUSAND_ON_CPU
