"""The naive matrix multiply: one thread per output element (B1)."""

import numpy as np

from thousand.kernels.matmul import matmul, matmul_ref

M, N, K = 300, 100, 200
rng = np.random.default_rng(0)
A = rng.standard_normal((M, K), dtype=np.float32)
B = rng.standard_normal((K, N), dtype=np.float32)
C = matmul(A, B, version=2)  # (M, N); B9 climbs from here
exact = matmul_ref(A, B)  # float64
print(f"C is {C.shape[0]} x {C.shape[1]}, {2 * M * N * K:,} floating-point operations")
print(f"largest error vs float64:          {np.abs(C - exact).max():.1e}")
print(f"largest error of NumPy's float32:  {np.abs(A @ B - exact).max():.1e}")
