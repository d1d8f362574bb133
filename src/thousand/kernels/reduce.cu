// reduce: out[0] = x[0] + x[1] + ... + x[n-1] for a float32 vector.
//
// v1: shared-memory tree: each thread sums a grid-stride slice, then the block halves
//     its partial sums in shared memory with a __syncthreads per level (sequential
//     addressing); one atomicAdd per block.
// v2: warp shuffles: float4 loads in a grid-stride loop, a shuffle tree in each warp,
//     one shared slot per warp, a last shuffle tree; one atomicAdd per block.
// Both need out[0] == 0 before the launch; the launcher clears it.

// --8<-- [start:reduce-v1]
extern "C" __global__ void reduce_v1(const float* x, float* out, int n) {
    extern __shared__ float partial[];  // blockDim.x floats, sized at launch
    int tid = threadIdx.x;
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += gridDim.x * blockDim.x) {
        sum += x[i];
    }
    partial[tid] = sum;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {  // blockDim.x: a power of 2
        if (tid < half) {
            partial[tid] += partial[tid + half];
        }
        __syncthreads();  // outside the if: every thread of the block must reach it
    }
    if (tid == 0) {
        atomicAdd(out, partial[0]);
    }
}
// --8<-- [end:reduce-v1]

// --8<-- [start:warp-sum]
// After the loop, lane 0 holds the sum of all 32 lanes' values.
__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    return v;
}
// --8<-- [end:warp-sum]

// --8<-- [start:reduce-v2]
extern "C" __global__ void reduce_v2(const float* x, float* out, int n) {
    __shared__ float warp_sums[32];  // one per warp: at most 1024 / 32
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int first = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
    int n4 = n / 4;  // whole float4s; the launcher checked 16-byte alignment
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float sum = 0.0f;
    for (int i = first; i < n4; i += stride) {
        float4 v = x4[i];
        sum += (v.x + v.y) + (v.z + v.w);
    }
    for (int i = 4 * n4 + first; i < n; i += stride) {  // at most 3 leftovers
        sum += x[i];
    }
    sum = warp_sum(sum);
    if (lane == 0) {
        warp_sums[warp] = sum;
    }
    __syncthreads();
    if (warp == 0) {  // the first warp adds up the block's warps
        sum = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f;
        sum = warp_sum(sum);
        if (lane == 0) {
            atomicAdd(out, sum);
        }
    }
}
// --8<-- [end:reduce-v2]
