// copy: out[i] = x[i]. Moves the fewest bytes any kernel can: the bandwidth ceiling
// every memory-bound kernel of this package is measured against.
//
// v1: one thread per element over many blocks.
// v2: grid-stride loop over float4, a scalar loop for the tail.

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
