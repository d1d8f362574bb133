"""The backward pass of tanh: dZ = G * (1 - Y^2), from the output Y.

python -m thousand.kernels.tanh_backward
"""

from __future__ import annotations

import numpy as np

from thousand.kernels.layer_launch import matrix_family

OP = "tanh_backward"


def tanh_backward_ref(G: np.ndarray, Y: np.ndarray) -> np.ndarray:
    return G.astype(np.float64) * (1.0 - Y.astype(np.float64) ** 2)


def make_inputs(rng, size):
    G = rng.standard_normal(size, dtype=np.float32)
    Y = rng.uniform(-1, 1, size).astype(np.float32)  # what a tanh outputs
    return G, Y


FAMILY = matrix_family(
    OP,
    "gradient through tanh from its output, one thread per element",
    tanh_backward_ref,
    make_inputs,
    ("G", "Y"),
    bytes_moved=lambda size: 3 * 4 * size[0] * size[1],
    tolerance=1e-6,  # a product of three float32 values, rounded each time
)
tanh_backward_v1 = FAMILY.versions[0].run


def tanh_backward(G, Y, out=None, version=1, block=256):
    return FAMILY.version(version).run(G, Y, out=out, block=block)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
