"""Bias and tanh, the forward pass of a layer of tanh units after Z = X W.

python -m thousand.kernels.bias_tanh
"""

from __future__ import annotations

import numpy as np

from thousand.kernels.layer_launch import matrix_family

OP = "bias_tanh"


def bias_tanh_ref(Z: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.tanh(Z.astype(np.float64) + b)


def make_inputs(rng, size):
    M, N = size
    return (
        rng.standard_normal((M, N), dtype=np.float32),
        rng.standard_normal(N, dtype=np.float32),
    )


FAMILY = matrix_family(
    OP,
    "bias added per column, then tanh, one thread per element",
    bias_tanh_ref,
    make_inputs,
    ("Z", "b"),
    bytes_moved=lambda size: 4 * (2 * size[0] * size[1] + size[1]),
    tolerance=1e-6,  # tanhf is within 2 ulp; the result lies in [-1, 1]
)
bias_tanh_v1 = FAMILY.versions[0].run


def bias_tanh(Z, b, out=None, version=1, block=256):
    return FAMILY.version(version).run(Z, b, out=out, block=block)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
