// Kernels for the CPU-backend article (B17): two bugs a GPU forgives or hides.

// --8<-- [start:early-exit]
// Sums each block's slice in shared memory. The bug: threads past n return before
// the barrier, so the others wait for threads that will never arrive.
extern "C" __global__ void block_sum_early_exit(const float* x, float* out, int n) {
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    s[threadIdx.x] = x[i];
    __syncthreads();
    if (threadIdx.x == 0) {
        float sum = 0.0f;
        for (int k = 0; k < blockDim.x; ++k)
            sum += s[k];
        out[blockIdx.x] = sum;
    }
}
// --8<-- [end:early-exit]

// --8<-- [start:warp-sum]
// The last 32 partial sums, added by one warp without __syncthreads. Old code relied
// on the 32 lanes running in lock-step; since Volta they need not, and only
// __syncwarp makes one lane's write visible to another's read.
extern "C" __global__ void warp_sum_lockstep(float* s) {  // s: 64 floats
    int t = threadIdx.x;                                  // one warp: t < 32
    volatile float* v = s;
    v[t] += v[t + 32];
    v[t] += v[t + 16];
    v[t] += v[t + 8];
    v[t] += v[t + 4];
    v[t] += v[t + 2];
    v[t] += v[t + 1];
}

extern "C" __global__ void warp_sum_syncwarp(float* s) {
    int t = threadIdx.x;
    for (int offset = 32; offset > 0; offset /= 2) {
        float mine = t < offset ? s[t] + s[t + offset] : 0.0f;
        __syncwarp();  // every read of this step before any write
        if (t < offset) s[t] = mine;
        __syncwarp();  // every write before the next step's reads
    }
}
// --8<-- [end:warp-sum]
