// axpy: out[i] = a * x[i] + y[i] for float32 vectors of length n (BLAS's SAXPY).
// Two FLOPs per 12 bytes moved: memory-bound on every GPU. out may be y (in place):
// each element is read and written by the same thread, so no pointer is __restrict__.
//
// v1: one thread per element over many blocks, with a bounds check.
// v2: grid-stride loop over float4 (16-byte accesses), a scalar loop for the tail.
//
// Both use fmaf: one fused multiply-add, rounded once, on the GPU and on the CPU
// backend alike, so the two backends agree bit for bit.

// --8<-- [start:axpy-v1]
extern "C" __global__ void axpy_v1(float a, const float* x, const float* y, float* out,
                                   int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = fmaf(a, x[i], y[i]);
    }
}
// --8<-- [end:axpy-v1]

// --8<-- [start:axpy-v2]
extern "C" __global__ void axpy_v2(float a, const float* x, const float* y, float* out,
                                   int n) {
    int stride = gridDim.x * blockDim.x;
    int first = blockIdx.x * blockDim.x + threadIdx.x;
    int n4 = n / 4;  // whole float4s; the launcher checked 16-byte alignment
    const float4* x4 = reinterpret_cast<const float4*>(x);
    const float4* y4 = reinterpret_cast<const float4*>(y);
    float4* out4 = reinterpret_cast<float4*>(out);
    for (int i = first; i < n4; i += stride) {
        float4 u = x4[i];
        float4 v = y4[i];
        out4[i] = make_float4(fmaf(a, u.x, v.x), fmaf(a, u.y, v.y), fmaf(a, u.z, v.z),
                              fmaf(a, u.w, v.w));
    }
    for (int i = 4 * n4 + first; i < n; i += stride) {  // at most 3 leftovers
        out[i] = fmaf(a, x[i], y[i]);
    }
}
// --8<-- [end:axpy-v2]
