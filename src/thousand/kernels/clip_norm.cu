// clip_norm: gradient clipping by global norm, with no trip to the host.
// Several gradient arrays g_1..g_m are treated as one vector g. First every array
// adds its sum of squares into one float on the device (clip_sum_squares, once per
// array); then every array is scaled by s = min(1, max_norm / (||g|| + 1e-6))
// (clip_norm_v1, once per array), which reads the sum where the first step left it.
// The host never waits for the norm, so a training step stays one stream of launches.
//
// v1: a block-wide tree of partial sums (block_sum), one atomicAdd per block; the
//     scale is one thread per element.

#include "block_sum.cuh"

// --8<-- [start:clip-sum-squares]
extern "C" __global__ void clip_sum_squares(const float* g, float* sumsq, int n) {
    __shared__ float s[32];
    float v = 0.0f;
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n;
         k += gridDim.x * blockDim.x) {
        v += g[k] * g[k];
    }
    v = block_sum(v, s);
    if (threadIdx.x == 0) atomicAdd(sumsq, v);
}
// --8<-- [end:clip-sum-squares]

// --8<-- [start:clip-norm-v1]
extern "C" __global__ void clip_norm_v1(const float* g, const float* sumsq,
                                        float max_norm, float* out, int n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    float norm = sqrtf(*sumsq);  // every thread reads the same word: one broadcast
    float s = fminf(1.0f, max_norm / (norm + 1e-6f));
    out[k] = g[k] * s;  // out may be g itself: the model clips in place
}
// --8<-- [end:clip-norm-v1]
