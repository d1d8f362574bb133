// reparam_kl: the latent layer of a VAE, forward. Row i of the M x N arrays mu and
// logvar is the encoder's Gaussian q(z | x_i) = N(mu, diag(exp(logvar))); for each
// element this kernel draws eps ~ N(0, 1) and writes
//     out[0] = z  = mu + exp(logvar / 2) * eps          (the reparameterisation)
//     out[1] = kl = (mu^2 + exp(logvar) - 1 - logvar) / 2
// so z is a differentiable function of mu and logvar, and a row sum of out[1] is
// the analytic KL(q(z | x_i) || N(0, I)) of example i.
// eps comes from Philox-4x32-10, the generator dropout uses (philox_normal.cuh):
// element e = offset + i * N + j takes counter (e, 1), and Box-Muller turns two of
// its words into one normal number. The backward pass (reparam_kl_backward.cu)
// recomputes the same eps instead of storing it.
//
// v1: one thread per element, one Philox call each, memory-bound like dropout.

#include "philox_normal.cuh"

// --8<-- [start:reparam-kl-v1]
extern "C" __global__ void reparam_kl_v1(const float* mu, const float* logvar,
                                         float* out, int n, unsigned seed_lo,
                                         unsigned seed_hi, unsigned offset_lo,
                                         unsigned offset_hi) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long e = ((unsigned long long)offset_hi << 32 | offset_lo) + i;
    float eps = philox_normal(e, seed_lo, seed_hi);
    float m = mu[i], lv = logvar[i], var = expf(lv);
    out[i] = m + sqrtf(var) * eps;                  // z
    out[n + i] = 0.5f * (m * m + var - 1.0f - lv);  // this element's share of KL
}
// --8<-- [end:reparam-kl-v1]
