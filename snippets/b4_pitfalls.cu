// Kernels for B4's pitfalls: two mistakes that a GPU may forgive today.

// --8<-- [start:barrier-in-branch]
// Two warps. The first 16 lanes of each stage a value and wait at a barrier, then
// read a value the other warp staged; lanes 16-31 skip the branch and finish.
extern "C" __global__ void half_warp_barrier(const float* x, float* out) {
    __shared__ float s[64];
    int t = threadIdx.x;
    if (t % 32 < 16) {
        s[t] = x[t];
        __syncthreads();  // wrong: lanes 16-31 of every warp never arrive
        out[t] = s[(t + 32) % 64];
    }
}
// --8<-- [end:barrier-in-branch]

// --8<-- [start:warp-total]
// One warp adds up 32 values through shared memory: every lane writes one, lane 0
// reads them all. Without __syncwarp nothing says the writes come first.
extern "C" __global__ void warp_total_unsynced(const float* x, float* out) {
    __shared__ float s[32];
    int lane = threadIdx.x;
    s[lane] = x[lane];
    if (lane == 0) {
        float total = 0.0f;
        for (int k = 0; k < 32; ++k)
            total += s[k];
        out[0] = total;
    }
}

extern "C" __global__ void warp_total(const float* x, float* out) {
    __shared__ float s[32];
    int lane = threadIdx.x;
    s[lane] = x[lane];
    __syncwarp();  // every lane's write is done, and visible, before lane 0 reads
    if (lane == 0) {
        float total = 0.0f;
        for (int k = 0; k < 32; ++k)
            total += s[k];
        out[0] = total;
    }
}
// --8<-- [end:warp-total]
