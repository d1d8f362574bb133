"""Hopper's warpgroup tensor cores (B9): C = A B^T in TF32 and in bf16 through TMA,
mbarriers and wgmma, on a size that no tile divides, against the exact product.

GPU only: wgmma, TMA and setmaxnreg need sm_90a (an H100 or H200); elsewhere the
launchers refuse with that reason.
"""

import numpy as np

from thousand.kernels.matmul_wgmma import BF16, matmul_wgmma
from thousand.kernels.matmul_wgmma_tf32 import matmul_wgmma_tf32

M, N, K = 1000, 1100, 520  # ragged on every tile; TMA wants K x 4 bytes % 16 == 0
rng = np.random.default_rng(0)
A = rng.standard_normal((M, K), dtype=np.float32)
Bt = rng.standard_normal((N, K), dtype=np.float32)  # B stored K-major: N x K


def error(C, exact):
    return np.abs(C.astype(np.float64) - exact).max() / np.abs(exact).max()


exact = A.astype(np.float64) @ Bt.astype(np.float64).T
print(f"C = A B^T, {M} x {N} x {K}; max |C - exact| / max |exact|:")
for v in (1, 2):
    print(f"  TF32 v{v}: {error(matmul_wgmma_tf32(A, Bt, version=v), exact):.1e}")
A16, Bt16 = A.astype(BF16), Bt.astype(BF16)  # bf16 inputs: the exact product of these
exact16 = A16.astype(np.float64) @ Bt16.astype(np.float64).T
for v in (1, 2):
    print(f"  bf16 v{v}: {error(matmul_wgmma(A16, Bt16, version=v), exact16):.1e}")
print(f"  (one rounding to bf16 alone: {error(exact16.astype(BF16), exact16):.1e})")
A518, Bt518 = (np.ascontiguousarray(x[:, :518]) for x in (A, Bt))
try:
    matmul_wgmma_tf32(A518, Bt518)  # rows of 2,072 bytes: not a multiple of 16
except ValueError as err:
    print("K = 518:", err)
