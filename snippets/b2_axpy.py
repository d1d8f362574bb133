"""AX+Y on the device, checked against NumPy, then 32 steps kept on the device (B2)."""

import numpy as np

from thousand.cuda import to_device
from thousand.kernels.axpy import axpy, axpy_ref

n = 1_000_003  # a prime: no block size divides it, and v2 has a scalar tail
a = np.float32(0.7)
rng = np.random.default_rng(0)
x = rng.standard_normal(n, dtype=np.float32)
y = rng.standard_normal(n, dtype=np.float32)
once = axpy_ref(a, x, y)  # a*x + y rounded once, as one fused multiply-add does

for version in (1, 2):
    out = axpy(a, x, y, version=version)  # NumPy in, NumPy out: copies included
    print(
        f"v{version}: {n:,} elements, a*x + y rounded once: {np.array_equal(out, once)}"
    )

# NumPy rounds a*x to float32, then rounds the sum again.
twice = a * x + y
differ = np.count_nonzero(out != twice)
worst = np.max(np.abs(out - twice) / (np.abs(a * x) + np.abs(y)))
print(f"NumPy's a*x + y (two roundings) differs in {differ:,} elements")
print(f"largest difference, relative to |a*x| + |y|: {worst:.1e}")

# Resident: x and y cross to the device once, y is updated in place 32 times,
# and only the final y comes back.
dx, dy = to_device(x), to_device(y)
for _ in range(32):
    axpy(a, dx, dy, out=dy)
host = y
for _ in range(32):
    host = axpy_ref(a, x, host)
final = dy.get()
print(
    f"32 steps on the device, one copy back: identical: {np.array_equal(final, host)}"
)
print("y[:4] before:", np.array2string(y[:4], precision=5))
print("y[:4] after: ", np.array2string(final[:4], precision=5))
