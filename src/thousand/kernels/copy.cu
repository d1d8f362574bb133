// copy: out[i] = x[i]. Moves the fewest bytes any kernel can: the bandwidth ceiling
// every memory-bound kernel of this package is measured against.
//
// v1: one thread per element over many blocks.
// v2: grid-stride loop over float4, a scalar loop for the tail.
// v3: one float4 per thread and a grid that covers the array once: no loop at all.
//     The hardware's block scheduler hands out the next block the moment one ends,
//     which balances the work better than v2's fixed share per thread.

// --8<-- [start:copy-v1]
extern "C" __global__ void copy_v1(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = x[i];
    }
}
// --8<-- [end:copy-v1]

// --8<-- [start:copy-v2]
extern "C" __global__ void copy_v2(const float* x, float* out, int n) {
    int stride = gridDim.x * blockDim.x;
    int first = blockIdx.x * blockDim.x + threadIdx.x;
    int n4 = n / 4;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* out4 = reinterpret_cast<float4*>(out);
    for (int i = first; i < n4; i += stride) {
        out4[i] = x4[i];
    }
    for (int i = 4 * n4 + first; i < n; i += stride) {
        out[i] = x[i];
    }
}
// --8<-- [end:copy-v2]

// --8<-- [start:copy-v3]
extern "C" __global__ void copy_v3(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int n4 = n / 4;
    if (i < n4) {
        reinterpret_cast<float4*>(out)[i] = reinterpret_cast<const float4*>(x)[i];
    } else if (4 * n4 + (i - n4) < n) {  // the last n % 4 elements, one a thread
        out[4 * n4 + (i - n4)] = x[4 * n4 + (i - n4)];
    }
}
// --8<-- [end:copy-v3]
