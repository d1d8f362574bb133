"""B11: one convolution with stride 2, padding 1 and two groups, computed four ways,
and its two gradients, each checked: against the NumPy reference, and the gradients
as the adjoints of the forward map (<conv(X), dY> = <X, dX> = <K, dK>)."""

import numpy as np

from thousand.cuda import on_cpu
from thousand.kernels.conv import FAMILY, conv, conv_ref
from thousand.kernels.conv_backward_data import conv_backward_data
from thousand.kernels.conv_backward_filter import conv_backward_filter
from thousand.kernels.conv_geometry import ConvGeometry

rng = np.random.default_rng(0)
geom = ConvGeometry(stride=2, pad=1, groups=2)
X = rng.standard_normal((8, 28, 28, 32), dtype=np.float32)  # N H W C
K = rng.standard_normal((3, 3, 16, 64), dtype=np.float32)  # R S C/G F
want = conv_ref(X, K, geom)
print(f"X {X.shape} * K {K.shape}, {geom} -> Y {want.shape}")

for v in FAMILY.versions:
    if v.gpu_only and on_cpu():
        print(f"v{v.number} {v.teaches}: needs tensor cores, not on the CPU backend")
        continue
    Y = conv(X, K, geom, version=v.number)
    err = np.abs(Y - want).max() / np.abs(want).max()
    print(f"v{v.number} {v.teaches}: max error {err:.1e}")

dY = rng.standard_normal(want.shape, dtype=np.float32)
dX = conv_backward_data(dY, K, (28, 28), geom)
dK = conv_backward_filter(X, dY, (3, 3), geom)
f64 = np.float64
print(f"<conv(X), dY> = {np.sum(want * dY):.6e}")
print(f"<X, dX>       = {np.sum(X.astype(f64) * dX):.6e}")
print(f"<K, dK>       = {np.sum(K.astype(f64) * dK):.6e}")
