// dropout: inverted dropout, Y = X * keep / (1 - p) with keep = (u >= p), u a
// uniform number in [0, 1) drawn for each element (of a 2-D or larger array, seen
// flat). Kept units are scaled up during training so that inference uses the
// layer as it is.
// The uniforms come from a counter-based generator, Philox-4x32-10 (Salmon,
// Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011;
// the generator of cuRAND and PyTorch's GPU dropout): a pure function of a key
// (the seed) and a counter (the element's index), so no state is kept, any
// thread draws its own number in any order, a run is repeatable, and the
// backward pass (dX = dY * keep / (1 - p), the same launch on dY) recomputes the
// mask instead of storing it. Element j = offset + i takes word j % 4 of Philox's
// four outputs for counter j / 4; u = (word >> 8) 2^-24, exact in float32.
// offset = step * numel gives each training step fresh numbers from one seed.
//
// v1: one thread per element, one Philox call each (it uses one of the four
//     words it computes: the mask is memory-bound work with arithmetic to spare).

#include "philox.cuh"  // philox4x32_10: the generator, shared with reparam_kl

// --8<-- [start:dropout-v1]
extern "C" __global__ void dropout_v1(const float* X, float* Y, int n, float p,
                                      float scale, unsigned seed_lo, unsigned seed_hi,
                                      unsigned offset_lo, unsigned offset_hi) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long j = ((unsigned long long)offset_hi << 32 | offset_lo) + i;
    unsigned long long group = j >> 2;  // Philox's counter: four words per call
    unsigned bits = philox4x32_10((unsigned)group, (unsigned)(group >> 32), 0u, 0u,
                                  seed_lo, seed_hi, (int)(j & 3));
    float u = (bits >> 8) * (1.0f / 16777216.0f);  // 24 bits over 2^24: exact
    Y[i] = u >= p ? X[i] * scale : 0.0f;
}
// --8<-- [end:dropout-v1]
