// bias_relu: out = max(Z + b, 0), the bias b (N values) added to every row of Z.
// Z and out are M x N, row-major: the forward pass of a dense layer after Z = X W.
//
// v1: one thread per element; its column, i % N, picks the bias.

#include "activations.cuh"

// --8<-- [start:bias-relu-v1]
extern "C" __global__ void bias_relu_v1(const float* Z, const float* b, float* out,
                                        int M, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < M * N) {
        float v = Z[i] + b[i % N];
        out[i] = relu(v);
    }
}
// --8<-- [end:bias-relu-v1]
