// A block-wide sum for the row-wise kernels (layer norm and its backward).
#pragma once

// --8<-- [start:block-sum]
// The sum of v over the block, returned to every thread; s holds one float per warp.
__device__ float block_sum(float v, float* s) {
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int o = 16; o > 0; o /= 2) {
        v += __shfl_xor_sync(0xffffffffu, v, o);  // butterfly: every lane gets the sum
    }
    __syncthreads();  // an earlier call may still be reading s
    if (lane == 0) {
        s[warp] = v;
    }
    __syncthreads();
    v = lane < blockDim.x / 32 ? s[lane] : 0.0f;
    for (int o = 16; o > 0; o /= 2) {  // every warp adds the partials: no broadcast
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;
}
// --8<-- [end:block-sum]
