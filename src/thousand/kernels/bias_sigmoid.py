"""Bias and sigmoid, the forward pass of a layer of sigmoid units after Z = X W.

python -m thousand.kernels.bias_sigmoid
"""

from __future__ import annotations

import numpy as np

from thousand.kernels.layer_launch import matrix_family

OP = "bias_sigmoid"


def bias_sigmoid_ref(Z: np.ndarray, b: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(Z.astype(np.float64) + b)))


def make_inputs(rng, size):
    M, N = size
    return (
        rng.standard_normal((M, N), dtype=np.float32),
        rng.standard_normal(N, dtype=np.float32),
    )


FAMILY = matrix_family(
    OP,
    "bias added per column, then sigmoid, one thread per element",
    bias_sigmoid_ref,
    make_inputs,
    ("Z", "b"),
    bytes_moved=lambda size: 4 * (2 * size[0] * size[1] + size[1]),
    tolerance=1e-6,  # expf is within 2 ulp; the result lies in [0, 1]
)
bias_sigmoid_v1 = FAMILY.versions[0].run


def bias_sigmoid(Z, b, out=None, version=1, block=256):
    return FAMILY.version(version).run(Z, b, out=out, block=block)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
