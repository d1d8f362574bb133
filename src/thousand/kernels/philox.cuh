// philox.cuh: Philox-4x32-10 (Salmon, Moraes, Dror and Shaw, SC 2011), the
// counter-based generator the package's random kernels share: dropout (A10) draws
// its keep-or-drop uniforms from it, reparam_kl (A9) its Gaussian noise
// (philox_normal, below). A pure function of a counter and a key, so any thread
// draws its own numbers in any order and a backward pass recomputes them instead
// of storing them. The NumPy twins: philox4x32_10 in dropout.py, normal_ref in
// reparam_kl.py.
#pragma once

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

// --8<-- [start:gaussian]
// A standard normal number for element e: Box-Muller on u1 in (0, 1] (so the log
// is finite) and u2 in [0, 1), both 24 bits over 2^24, exact in float32.
__device__ __forceinline__ float philox_normal(unsigned long long e, unsigned seed_lo,
                                               unsigned seed_hi) {
    unsigned lo = (unsigned)e, hi = (unsigned)(e >> 32);
    unsigned w0 = philox4x32_10(lo, hi, 1u, 0u, seed_lo, seed_hi, 0);
    unsigned w1 = philox4x32_10(lo, hi, 1u, 0u, seed_lo, seed_hi, 1);
    float u1 = ((w0 >> 8) + 1) * (1.0f / 16777216.0f);
    float u2 = (w1 >> 8) * (1.0f / 16777216.0f);
    return sqrtf(-2.0f * logf(u1)) * cosf(6.28318531f * u2);
}
// --8<-- [end:gaussian]
