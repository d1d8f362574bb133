// gelu_backward: dx[i] = dy[i] * gelu'(x[i]) for GELU's tanh form (gelu.cuh), from
// the forward's input x: the derivative needs x, not y, so the forward keeps x.
// Two reads and one write per element.
//
// v1: one thread per element, in a grid-stride loop.
// v2: v1 over float4 (16-byte loads of dy and x, stores of dx), a scalar loop for
//     the n % 4 elements past the last whole float4. Aligned arrays only.

#include "gelu.cuh"

// --8<-- [start:gelu-backward-v1]
extern "C" __global__ void gelu_backward_v1(const float* dy, const float* x, float* dx,
                                            int n) {
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        dx[i] = dy[i] * gelu_grad(x[i]);
    }
}
// --8<-- [end:gelu-backward-v1]

// --8<-- [start:gelu-backward-v2]
extern "C" __global__ void gelu_backward_v2(const float* dy, const float* x, float* dx,
                                            int n) {
    int stride = gridDim.x * blockDim.x;
    int first = blockIdx.x * blockDim.x + threadIdx.x;
    int n4 = n / 4;
    const float4* dy4 = reinterpret_cast<const float4*>(dy);
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* dx4 = reinterpret_cast<float4*>(dx);
    for (int i = first; i < n4; i += stride) {
        float4 g = dy4[i], v = x4[i];
        dx4[i] = make_float4(g.x * gelu_grad(v.x), g.y * gelu_grad(v.y),
                             g.z * gelu_grad(v.z), g.w * gelu_grad(v.w));
    }
    for (int i = 4 * n4 + first; i < n; i += stride) {
        dx[i] = dy[i] * gelu_grad(x[i]);
    }
}
// --8<-- [end:gelu-backward-v2]
