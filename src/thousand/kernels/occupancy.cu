// occupancy: out[i] = x[i], three ways that differ in what limits how many warps an
// SM holds at once (occupancy) and how many bytes each warp keeps in flight.
//
// v1: one element per thread, passed through a slot of shared memory. The launcher
//     sets the block's shared-memory footprint (at least one float per thread), as
//     a tiled kernel's buffers would: the larger it is, the fewer blocks fit on an
//     SM, the fewer warps there are to hide the latency of memory.
// v2: ILP elements per thread, every load issued before the first store: many
//     registers per thread, so fewer warps fit, but each has ILP loads in flight.
// v3: v2 under __launch_bounds__(1024): the compiler must fit 1024 threads, at most
//     64 registers each, and spills what does not fit to local memory.

#define ILP 64  // elements per thread in v2 and v3

// --8<-- [start:occupancy-v1]
extern "C" __global__ void occupancy_v1(const float* x, float* out, int n) {
    extern __shared__ float slot[];  // the launcher's footprint, per block
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        slot[threadIdx.x] = x[i];
        out[i] = slot[threadIdx.x];
    }
}
// --8<-- [end:occupancy-v1]

// --8<-- [start:occupancy-v2]
// Unsigned indices: n < 2^31, so first + k * blockDim stays below 2^32.
__device__ __forceinline__ void copy_many(const float* x, float* out, int n) {
    float v[ILP];  // fully unrolled below: ILP registers, not memory
    unsigned first = blockIdx.x * blockDim.x * ILP + threadIdx.x;
#pragma unroll
    for (int k = 0; k < ILP; ++k) {  // ILP independent loads, all in flight at once
        unsigned i = first + k * blockDim.x;  // each one coalesced across the warp
        v[k] = i < (unsigned)n ? x[i] : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < ILP; ++k) {
        unsigned i = first + k * blockDim.x;
        if (i < (unsigned)n) {
            out[i] = v[k];
        }
    }
}

extern "C" __global__ void occupancy_v2(const float* x, float* out, int n) {
    copy_many(x, out, n);
}
// --8<-- [end:occupancy-v2]

// --8<-- [start:occupancy-v3]
extern "C" __global__ void __launch_bounds__(1024)
    occupancy_v3(const float* x, float* out, int n) {
    copy_many(x, out, n);  // the same code, squeezed into 64 registers
}
// --8<-- [end:occupancy-v3]
