// tanh_backward: dZ = G * f'(Z) for y = tanh(z), written with the forward output:
// G is dL/dY and Y the layer's output, both M x N. The forward pass keeps Y, so the
// backward pass needs no Z and no second call to the activation.
//
// v1: one thread per element.

#include "activations.cuh"

// --8<-- [start:tanh-backward-v1]
extern "C" __global__ void tanh_backward_v1(const float* G, const float* Y, float* dZ,
                                            int M, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < M * N) {
        dZ[i] = G[i] * tanh_grad(Y[i]);
    }
}
// --8<-- [end:tanh-backward-v1]
