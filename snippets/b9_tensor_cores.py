"""Tensor cores in TF32 (v8) against float32 on CUDA cores (v7), one size (B9).

GPU only: needs tensor cores with TF32 (sm_80 or newer) and the 153 KiB of shared
memory per block that v8's three-stage pipeline asks for (A100, H100 and the like).
"""

import numpy as np

from thousand.kernels.matmul import matmul, matmul_ref


def tf32(x):
    """Round float32 to TF32 as cvt.rna does: keep 10 mantissa bits, ties away."""
    u = x.view(np.uint32)
    return ((u + 0x1000) & 0xFFFFE000).view(np.float32)


M = N = K = 1024
rng = np.random.default_rng(0)
A = rng.standard_normal((M, K), dtype=np.float32)
B = rng.standard_normal((K, N), dtype=np.float32)
exact = matmul_ref(A, B)  # float64
scale = np.abs(exact).max()


def error(C):
    return np.abs(C - exact).max() / scale


e7 = error(matmul(A, B, version=7))
e8 = error(matmul(A, B, version=8))
e_in = error(matmul_ref(tf32(A), tf32(B)))  # exact sums of TF32-rounded inputs
print(f"{M} x {N} x {K}, max |C - exact| / max |exact|:")
print(f"  v7, float32 on CUDA cores:     {e7:.1e}")
print(f"  v8, TF32 on tensor cores:      {e8:.1e}")
print(f"  inputs rounded to TF32 alone:  {e_in:.1e}")
print(f"v8's error is {e8 / e7:.0f} times v7's")
