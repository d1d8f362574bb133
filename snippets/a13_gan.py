"""A13: a transposed convolution is the input gradient of a convolution.

The DCGAN's generator upsamples 4 x 4 maps to 8 x 8 with B11's conv_backward_data,
called forward. Check that it is the adjoint of the stride-2 convolution
(<conv(x), y> = <x, conv_t(y)>), then take a few steps of the ring GAN.
"""

import numpy as np

from thousand.kernels.conv import conv
from thousand.kernels.conv_backward_data import conv_backward_data
from thousand.models import gan

rng = np.random.default_rng(0)
K = rng.standard_normal((4, 4, 1, 32)).astype(np.float32)  # R x S x C x F
x = rng.standard_normal((2, 8, 8, 1)).astype(np.float32)  # an 8 x 8 image
y = rng.standard_normal((2, 4, 4, 32)).astype(np.float32)  # a 4 x 4 x 32 map
down = conv(x, K, gan.UP)  # (2, 4, 4, 32): the discriminator's direction
up = conv_backward_data(y, K, (8, 8), gan.UP)  # (2, 8, 8, 1): the generator's
print(f"conv: {x.shape} -> {down.shape};  transposed: {y.shape} -> {up.shape}")
lhs = float((down.astype(np.float64) * y).sum())
rhs = float((x.astype(np.float64) * up).sum())
scale = float(np.abs(down.astype(np.float64) * y).sum())  # what the sums could lose
gap = abs(lhs - rhs) / scale
print(f"<conv(x), y> - <x, conv_t(y)> = {gap:.1e} of the sum of |terms|")

cfg = gan.Config("ring", z=16, batch=64, lr=1e-3)
model = gan.GAN(cfg, gan.init(cfg, 0), "non-saturating")
for step in range(1, 4):
    d = model.d_step(gan.ring(rng, 64), gan.noise(rng, 64, cfg.z)).get().mean()
    g = model.g_step(gan.noise(rng, 64, cfg.z)).get().mean()
    print(f"step {step}: D loss {d:.3f}  G loss {g:.3f}")
