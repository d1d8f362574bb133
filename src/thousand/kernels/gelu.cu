// gelu: y[i] = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) for every element of
// a float32 array taken flat, the activation between GPT-2's two MLP matmuls
// (gelu.cuh holds the formula). One read and one write per element: a copy's
// traffic, so the copy kernel is the speed to reach.
//
// v1: one thread per element, in a grid-stride loop: a grid sized to fill the
//     GPU walks an array of any length.
// v2: v1 over float4: four elements per 16-byte load and store, a quarter of the
//     memory instructions; the n % 4 elements past the last whole float4 go one
//     by one. The launcher demands 16-byte aligned arrays.

#include "gelu.cuh"

// --8<-- [start:gelu-v1]
extern "C" __global__ void gelu_v1(const float* x, float* y, int n) {
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = gelu(x[i]);
    }
}
// --8<-- [end:gelu-v1]

// --8<-- [start:gelu-v2]
extern "C" __global__ void gelu_v2(const float* x, float* y, int n) {
    int stride = gridDim.x * blockDim.x;
    int first = blockIdx.x * blockDim.x + threadIdx.x;
    int n4 = n / 4;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* y4 = reinterpret_cast<float4*>(y);
    for (int i = first; i < n4; i += stride) {
        float4 v = x4[i];
        y4[i] = make_float4(gelu(v.x), gelu(v.y), gelu(v.z), gelu(v.w));
    }
    for (int i = 4 * n4 + first; i < n; i += stride) {  // the ragged tail
        y[i] = gelu(x[i]);
    }
}
// --8<-- [end:gelu-v2]
