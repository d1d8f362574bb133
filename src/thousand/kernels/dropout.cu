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

// --8<-- [start:philox]
// The high 32 bits of a 32 x 32-bit product (nvcc makes it one mul.hi.u32).
__device__ __forceinline__ unsigned mulhi32(unsigned a, unsigned b) {
    return (unsigned)(((unsigned long long)a * b) >> 32);
}

// Philox-4x32 with 10 rounds: counter (c0, c1, c2, c3), key (k0, k1); word w of 4.
__device__ __forceinline__ unsigned philox4x32_10(unsigned c0, unsigned c1, unsigned c2,
                                                  unsigned c3, unsigned k0, unsigned k1,
                                                  int w) {
    for (int round = 0; round < 10; ++round) {
        unsigned hi0 = mulhi32(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
        unsigned hi1 = mulhi32(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
        k0 += 0x9E3779B9u;  // the Weyl sequence of the key: golden ratio, sqrt(3) - 1
        k1 += 0xBB67AE85u;
    }
    return w == 0 ? c0 : w == 1 ? c1 : w == 2 ? c2 : c3;
}
// --8<-- [end:philox]

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
