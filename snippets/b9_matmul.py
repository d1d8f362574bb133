"""Every CUDA-core rung of the matmul ladder on sizes no tile divides (B9)."""

import numpy as np

from thousand.kernels.matmul import matmul, matmul_ref

rng = np.random.default_rng(0)
# 300 and 200 are no multiple of any tile (32, 64, 128); K = 132 keeps rows of A
# 16-byte aligned (float4 path), K = 130 and N = 201 do not (scalar path).
for M, N, K in ((300, 200, 132), (300, 201, 130)):
    A = rng.standard_normal((M, K), dtype=np.float32)
    B = rng.standard_normal((K, N), dtype=np.float32)
    exact = matmul_ref(A, B)  # float64
    scale = np.abs(exact).max()
    print(f"{M} x {N} x {K}: K % 4 = {K % 4}, N % 4 = {N % 4}")
    for version in range(1, 8):
        C = matmul(A, B, version=version)
        print(
            f"  v{version}: max |C - exact| / max |exact| = "
            f"{np.abs(C - exact).max() / scale:.1e}"
        )

try:  # A is 300 x 130, so B must have 130 rows
    matmul(A, B[:128], version=7)
except ValueError as e:
    print("bad input:", e)
