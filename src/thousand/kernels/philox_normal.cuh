// philox_normal.cuh: standard normal numbers from Philox-4x32-10, for the VAE's
// latent layer (reparam_kl and reparam_kl_backward, A9). Element e takes counter
// (e, 1): the third word 1 keeps these numbers apart from dropout's, which count
// with 0 there, under the same seed. The NumPy twin: normal_ref in reparam_kl.py.
// The generator itself is dropout's (A10): one copy of Philox in the package.
// Including dropout.cu brings its kernel along too; it is compiled, never launched
// from here.
#pragma once

#include "dropout.cu"  // philox4x32_10

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
