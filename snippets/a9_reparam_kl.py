"""The VAE's latent layer on the GPU: z = mu + sigma * eps with eps drawn by
Philox in the kernel, the analytic KL, and the backward pass checked against
finite differences (A9)."""

import numpy as np

from thousand.kernels.reparam_kl import normal_ref, reparam_kl, reparam_kl_ref
from thousand.kernels.reparam_kl_backward import reparam_kl_backward

seed, offset = 2026, 0
mu = np.array([[0.0, 1.5, -0.5], [2.0, 0.0, 0.0]], np.float32)  # 2 pictures, L = 3
logvar = np.array([[0.0, -2.0, 1.0], [0.0, -4.0, 0.0]], np.float32)

out = reparam_kl(mu, logvar, seed, offset)  # (2, 2, 3): z, then each element's KL


def show(name, a):
    print(f"{name:>22}:", "  ".join(f"{v:+.4f}" for v in np.ravel(a)))


show("eps", normal_ref(mu.size, seed, offset))  # the same numbers, in NumPy
show("z", out[0])
show("KL per picture (nats)", out[1].sum(axis=1, dtype=np.float64))
ref = reparam_kl_ref(mu, logvar, seed, offset)
print("matches NumPy:", bool(np.allclose(out, ref, rtol=1e-5, atol=1e-5)))

# Backward of L = sum(dz * z) + w * KL, against central differences in float64
# (eps stays the same: the same seed and offset draw the same numbers).
dz, w, h = np.ones_like(mu), 0.5, 1e-6
grads = reparam_kl_backward(dz, mu, logvar, w, seed, offset)  # (2, 2, 3)


def loss(m, lv):
    z, kl = reparam_kl_ref(m, lv, seed, offset)
    return (dz * z).sum() + w * kl.sum()


m64, lv64 = mu.astype(np.float64), logvar.astype(np.float64)
worst = 0.0
for which, x in enumerate((m64, lv64)):
    for i in np.ndindex(x.shape):
        x[i] += h
        up = loss(m64, lv64)
        x[i] -= 2 * h
        down = loss(m64, lv64)
        x[i] += h
        worst = max(worst, abs((up - down) / (2 * h) - grads[which][i]))
print("backward within 1e-5 of finite differences:", worst < 1e-5)

# A million draws from one launch: the moments of a standard normal
big = reparam_kl(
    np.zeros((1000, 1000), np.float32), np.zeros((1000, 1000), np.float32), seed, offset
)[0]
print(f"1,000,000 draws: mean {big.mean():+.3f}, variance {big.var():.3f}")
