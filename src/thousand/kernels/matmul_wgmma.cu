// matmul_wgmma: C = A B^T in bfloat16 (float32 accumulate, bf16 out) on Hopper's
// warpgroup tensor cores: TMA, mbarriers and wgmma, sm_90a only. B arrives as B^T
// (N x K, K-major); matmul_wgmma_tf32.cu runs the same rungs on floats.
//
// v1: one warpgroup: TMA brings the next tiles while it multiplies the current ones
//     (2 stages); a 128 x 128 block tile is two 64-row wgmma per k step.
// v2: warp specialisation: a producer warpgroup keeps 4 stages of tiles in flight,
//     two consumer warpgroups own 64 x 256 each of a 128 x 256 tile (setmaxnreg).
// Both are written once, for both operand types, in wgmma_gemm.cuh.

#ifndef THOUSAND_ON_CPU  // TMA and wgmma: nothing the CPU can emulate
#include "wgmma_gemm.cuh"

// --8<-- [start:matmul-wgmma-v1]
extern "C" __global__ void __launch_bounds__(128)
    matmul_wgmma_v1(const TensorMap* maps, __nv_bfloat16* C, int M, int N, int K) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    gemm_v1<Bf16>(maps, C, M, N, K);
#else
    __trap();  // built for another GPU: the launcher refuses before it gets here
#endif
}
// --8<-- [end:matmul-wgmma-v1]

// --8<-- [start:matmul-wgmma-v2]
extern "C" __global__ void __launch_bounds__(384, 1)
    matmul_wgmma_v2(const TensorMap* maps, __nv_bfloat16* C, int M, int N, int K) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    gemm_v2<Bf16>(maps, C, M, N, K);
#else
    __trap();
#endif
}
// --8<-- [end:matmul-wgmma-v2]

#endif  // THOUSAND_ON_CPU
