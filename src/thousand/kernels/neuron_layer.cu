// neuron_layer: y = sigmoid(W x + b), one layer of neurons.
// W is N_out x N_in (row-major), x has N_in entries, b and y have N_out.
//
// v1: one thread per neuron: each thread walks its own row of W. Neighbouring threads
//     read addresses N_in floats apart, so a warp's loads are not coalesced.
// v2: one warp per neuron: the 32 lanes read neighbouring floats of the same row, then
//     add their partial sums with warp shuffles.

#include "activations.cuh"

// --8<-- [start:neuron-layer-v1]
extern "C" __global__ void neuron_layer_v1(const float* W, const float* x,
                                           const float* b, float* y, int n_out,
                                           int n_in) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;  // this thread's neuron
    if (j < n_out) {
        float z = b[j];
        for (int k = 0; k < n_in; ++k) {
            z += W[j * n_in + k] * x[k];
        }
        y[j] = sigmoid(z);
    }
}
// --8<-- [end:neuron-layer-v1]

// --8<-- [start:neuron-layer-v2]
extern "C" __global__ void neuron_layer_v2(const float* W, const float* x,
                                           const float* b, float* y, int n_out,
                                           int n_in) {
    int lane = threadIdx.x % 32;
    int j = (blockIdx.x * blockDim.x + threadIdx.x) / 32;  // this warp's neuron
    if (j >= n_out) return;  // whole warps leave together: the shuffles stay full
    float partial = 0.0f;
    for (int k = lane; k < n_in; k += 32) {  // lane k reads W[j, k]: one cache line
        partial += W[j * n_in + k] * x[k];
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        partial += __shfl_down_sync(0xffffffffu, partial, offset);
    }
    if (lane == 0) {
        y[j] = sigmoid(partial + b[j]);
    }
}
// --8<-- [end:neuron-layer-v2]
