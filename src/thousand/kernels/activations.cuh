// Device-side activation functions, shared by every family that needs them.
#pragma once

// --8<-- [start:sigmoid-device]
// A __device__ function runs on the GPU and is called from kernels, not from the host.
__device__ __forceinline__ float sigmoid(float z) {
    // expf, not __expf: the fast intrinsic loses accuracy for large |z|.
    return 1.0f / (1.0f + expf(-z));
}
// --8<-- [end:sigmoid-device]
