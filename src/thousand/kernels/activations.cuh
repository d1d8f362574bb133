// Device-side activation functions, shared by every family that needs them.
#pragma once

// --8<-- [start:sigmoid-device]
// A __device__ function runs on the GPU and is called from kernels, not from the host.
__device__ __forceinline__ float sigmoid(float z) {
    // expf, not __expf: the fast intrinsic loses accuracy for large |z|.
    return 1.0f / (1.0f + expf(-z));
}
// --8<-- [end:sigmoid-device]

// --8<-- [start:layer-activations]
// The activations of track A's layers, and each one's derivative written in terms of
// the activation's output y = f(z): the backward pass keeps y, not z.
__device__ __forceinline__ float relu(float z) {
    return z > 0.0f ? z : 0.0f;
}
__device__ __forceinline__ float relu_grad(float y) {
    return y > 0.0f ? 1.0f : 0.0f;
}
__device__ __forceinline__ float sigmoid_grad(float y) {
    return y * (1.0f - y);
}
__device__ __forceinline__ float tanh_grad(float y) {
    return 1.0f - y * y;
}
// --8<-- [end:layer-activations]
