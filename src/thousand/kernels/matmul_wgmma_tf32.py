"""C = A B^T with float32 operands multiplied as TF32 on Hopper's warpgroup tensor
cores (float32 accumulate and out): matmul_wgmma's two rungs on floats. TF32 wgmma
reads both operands K-major only, so B comes as B^T (N x K), as for matmul_wgmma.

python -m thousand.kernels.matmul_wgmma_tf32      (needs an H100 or H200)
"""

from __future__ import annotations

import numpy as np

from thousand.kernels.family import Family
from thousand.kernels.matmul_wgmma import (
    CHECK_SIZES,
    RUNGS,
    make_inputs,
    run_wgmma,
    versions,
)

OP = "matmul_wgmma_tf32"
F32 = np.dtype(np.float32)


def matmul_wgmma_tf32_ref(a, bt) -> np.ndarray:
    """The exact product, in float64."""
    return a.astype(np.float64) @ bt.astype(np.float64).T


def matmul_wgmma_tf32_v1(a, bt, out=None, block=128):
    return run_wgmma(OP, "matmul_wgmma_tf32_v1", RUNGS[1], F32, a, bt, out, block)


def matmul_wgmma_tf32_v2(a, bt, out=None, block=384):
    return run_wgmma(OP, "matmul_wgmma_tf32_v2", RUNGS[2], F32, a, bt, out, block)


def matmul_wgmma_tf32(a, bt, out=None, version=2):
    """a @ bt.T, float32 in and out, TF32 products."""
    v = FAMILY.version(version)
    return v.run(a, bt, out=out, block=v.default_block)


FAMILY = Family(
    name=OP,
    versions=versions(OP, matmul_wgmma_tf32_v1, matmul_wgmma_tf32_v2, ", TF32"),
    ref=matmul_wgmma_tf32_ref,
    make_inputs=lambda rng, size: make_inputs(rng, size, F32),
    check_sizes=CHECK_SIZES,
    bench_size=(8192, 8192, 8192),
    flops=lambda size: 2 * size[0] * size[1] * size[2],
    # TF32 keeps 10 mantissa bits; the copy engine hands the tensor cores the float
    # as stored, and they drop the low 13 bits (truncation, 2^-10 relative)
    tolerance=5e-3,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
