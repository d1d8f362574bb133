// stencil: a 1-D convolution of float32 x with K = 9 taps, zero outside the array:
//     out[i] = sum over k of taps[k] * x[i + k - R],   R = 4
// (a cross-correlation, which is what deep learning calls conv1d). Every thread
// computes one output and every tap is used by every thread: the uniform read that
// constant memory is built for.
//
// v1: taps in global memory, read through a pointer argument.
// v2: taps in __constant__ memory: all 32 lanes of a warp read the same tap at the
//     same time, one broadcast from the constant cache.
// v3: v2, with the block's inputs and a halo of R on each side first staged in
//     shared memory, so each input is read from global memory once per block.
// v4: v2 with each lane walking the taps in its own order: a warp asks for up to 9
//     different constant addresses at once, and the constant cache serves them one
//     address after another.

#define STENCIL_K 9
#define STENCIL_R 4  // (STENCIL_K - 1) / 2

// --8<-- [start:constant]
__constant__ float stencil_taps[STENCIL_K];  // set from the host: set_constant
// --8<-- [end:constant]

// --8<-- [start:stencil-v1]
extern "C" __global__ void stencil_v1(const float* x, const float* taps, float* out,
                                      int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = 0.0f;
#pragma unroll
        for (int k = 0; k < STENCIL_K; ++k) {
            int j = i + k - STENCIL_R;
            if (j >= 0 && j < n) {
                acc += taps[k] * x[j];  // a load from global memory per tap
            }
        }
        out[i] = acc;
    }
}
// --8<-- [end:stencil-v1]

// --8<-- [start:stencil-v2]
extern "C" __global__ void stencil_v2(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = 0.0f;
#pragma unroll
        for (int k = 0; k < STENCIL_K; ++k) {
            int j = i + k - STENCIL_R;
            if (j >= 0 && j < n) {
                acc += stencil_taps[k] * x[j];  // same k in every lane: a broadcast
            }
        }
        out[i] = acc;
    }
}
// --8<-- [end:stencil-v2]

// --8<-- [start:stencil-v3]
extern "C" __global__ void stencil_v3(const float* x, float* out, int n) {
    extern __shared__ float window[];  // blockDim.x + 2 * STENCIL_R floats
    int first = blockIdx.x * blockDim.x - STENCIL_R;  // x index of window[0]
    for (int t = threadIdx.x; t < blockDim.x + 2 * STENCIL_R; t += blockDim.x) {
        int j = first + t;
        window[t] = (j >= 0 && j < n) ? x[j] : 0.0f;  // zeros past either end
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = 0.0f;
#pragma unroll
        for (int k = 0; k < STENCIL_K; ++k) {
            acc += stencil_taps[k] * window[threadIdx.x + k];
        }
        out[i] = acc;
    }
}
// --8<-- [end:stencil-v3]

// --8<-- [start:stencil-v4]
extern "C" __global__ void stencil_v4(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = 0.0f;
#pragma unroll
        for (int s = 0; s < STENCIL_K; ++s) {
            int k = (s + threadIdx.x) % STENCIL_K;  // lane l starts at tap l mod 9
            int j = i + k - STENCIL_R;
            if (j >= 0 && j < n) {
                acc += stencil_taps[k] * x[j];  // 9 addresses per warp: serialised
            }
        }
        out[i] = acc;
    }
}
// --8<-- [end:stencil-v4]
