"""The backward pass of ReLU: dZ = G where the unit was active (Y > 0), else 0.

python -m thousand.kernels.relu_backward
"""

from __future__ import annotations

import numpy as np

from thousand.kernels.layer_launch import matrix_family

OP = "relu_backward"


def relu_backward_ref(G: np.ndarray, Y: np.ndarray) -> np.ndarray:
    return G.astype(np.float64) * (Y > 0)


def make_inputs(rng, size):
    G = rng.standard_normal(size, dtype=np.float32)
    Y = np.maximum(rng.standard_normal(size, dtype=np.float32), 0)  # half are 0
    return G, Y


FAMILY = matrix_family(
    OP,
    "gradient through ReLU from its output, one thread per element",
    relu_backward_ref,
    make_inputs,
    ("G", "Y"),
    bytes_moved=lambda size: 3 * 4 * size[0] * size[1],
)
relu_backward_v1 = FAMILY.versions[0].run


def relu_backward(G, Y, out=None, version=1, block=256):
    return FAMILY.version(version).run(G, Y, out=out, block=block)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
