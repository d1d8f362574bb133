"""Bias and ReLU, the forward pass of a hidden layer after Z = X W (track A).

python -m thousand.kernels.bias_relu
"""

from __future__ import annotations

import numpy as np

from thousand.kernels.layer_launch import matrix_family

OP = "bias_relu"


def bias_relu_ref(Z: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.maximum(Z.astype(np.float64) + b, 0.0)


def make_inputs(rng, size):
    M, N = size
    return (
        rng.standard_normal((M, N), dtype=np.float32),
        rng.standard_normal(N, dtype=np.float32),
    )


FAMILY = matrix_family(
    OP,
    "bias added per column, then ReLU, one thread per element",
    bias_relu_ref,
    make_inputs,
    ("Z", "b"),
    bytes_moved=lambda size: 4 * (2 * size[0] * size[1] + size[1]),
    tolerance=1e-7,  # one float32 addition, rounded once
)
bias_relu_v1 = FAMILY.versions[0].run


def bias_relu(Z, b, out=None, version=1, block=256):
    return FAMILY.version(version).run(Z, b, out=out, block=block)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
