"""The backward pass of sigmoid: dZ = G * Y * (1 - Y), from the output Y.

python -m thousand.kernels.sigmoid_backward
"""

from __future__ import annotations

import numpy as np

from thousand.kernels.layer_launch import matrix_family

OP = "sigmoid_backward"


def sigmoid_backward_ref(G: np.ndarray, Y: np.ndarray) -> np.ndarray:
    return G.astype(np.float64) * Y * (1.0 - Y.astype(np.float64))


def make_inputs(rng, size):
    G = rng.standard_normal(size, dtype=np.float32)
    Y = rng.uniform(0, 1, size).astype(np.float32)  # what a sigmoid outputs
    return G, Y


FAMILY = matrix_family(
    OP,
    "gradient through sigmoid from its output, one thread per element",
    sigmoid_backward_ref,
    make_inputs,
    ("G", "Y"),
    bytes_moved=lambda size: 3 * 4 * size[0] * size[1],
    tolerance=1e-6,  # a product of three float32 values, rounded each time
)
sigmoid_backward_v1 = FAMILY.versions[0].run


def sigmoid_backward(G, Y, out=None, version=1, block=256):
    return FAMILY.version(version).run(G, Y, out=out, block=block)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
