// sigmoid: out[i] = 1 / (1 + exp(-x[i])), through a __device__ function.
//
// v1: one thread per element; the math lives in activations.cuh so other families
//     (the neuron layer) call the very same function.

#include "activations.cuh"

// --8<-- [start:sigmoid-v1]
extern "C" __global__ void sigmoid_v1(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = sigmoid(x[i]);
    }
}
// --8<-- [end:sigmoid-v1]
