"""Vector add four ways, each checked against NumPy (B1)."""

import numpy as np

from thousand.kernels.vector_add import vector_add, vector_add_ref

n = 1_000_003  # a prime: no block size divides it, so the bounds checks matter
rng = np.random.default_rng(0)
x = rng.standard_normal(n, dtype=np.float32)
y = rng.standard_normal(n, dtype=np.float32)
expected = vector_add_ref(x, y)

for version in (1, 2, 3, 4):
    out = vector_add(x, y, version=version)  # NumPy in, NumPy out: copies included
    print(
        f"v{version}: {n:,} elements, identical to NumPy: "
        f"{np.array_equal(out, expected)}"
    )
