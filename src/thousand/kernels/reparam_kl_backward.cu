// reparam_kl_backward: the VAE's latent layer, backward. Given dz = dL/dz from the
// decoder and the weight w of the KL term in the loss (beta / batch for the mean
// over a batch of L = reconstruction + beta * KL), it writes
//     out[0] = dL/dmu     = dz + w * mu
//     out[1] = dL/dlogvar = dz * eps * exp(logvar / 2) / 2 + w * (exp(logvar) - 1) / 2
// The first terms run back through z = mu + exp(logvar / 2) * eps, the second are
// the derivatives of the analytic KL. eps is drawn again from the forward's seed
// and offset (philox_normal): nothing but mu and logvar is kept.
//
// v1: one thread per element.

#include "philox_normal.cuh"  // the forward's eps, drawn again

// --8<-- [start:reparam-kl-backward-v1]
extern "C" __global__ void reparam_kl_backward_v1(const float* dz, const float* mu,
                                                  const float* logvar, float* out,
                                                  int n, float w, unsigned seed_lo,
                                                  unsigned seed_hi, unsigned offset_lo,
                                                  unsigned offset_hi) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long e = ((unsigned long long)offset_hi << 32 | offset_lo) + i;
    float eps = philox_normal(e, seed_lo, seed_hi);
    float g = dz[i], lv = logvar[i], sigma = expf(0.5f * lv);
    out[i] = g + w * mu[i];
    out[n + i] = 0.5f * (g * eps * sigma + w * (sigma * sigma - 1.0f));
}
// --8<-- [end:reparam-kl-backward-v1]
