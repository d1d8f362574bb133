"""Elementwise sigmoid through a `__device__` function.

python -m thousand.kernels.sigmoid
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import cdiv, launch_1d
from thousand.kernels.family import Family, Version, pick

OP = "sigmoid"


def sigmoid_ref(x: np.ndarray) -> np.ndarray:
    """In float64, so the GPU's float32 result is compared with the exact value."""
    return 1.0 / (1.0 + np.exp(-x.astype(np.float64)))


def sigmoid_v1(x, out=None, block=256):
    return launch_1d(
        OP, "sigmoid_v1", {"x": x}, out, block, grid_for=lambda n: cdiv(n, block)
    )


def sigmoid(x, out=None, version=1, block=256):
    return pick(FAMILY, version)(x, out=out, block=block)


def make_inputs(rng, size):
    # Wide enough to reach both saturated ends, where 1 + exp(-z) over- or underflows.
    return ((rng.standard_normal(size[0]) * 30).astype(np.float32),)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "sigmoid_v1",
            "a __device__ function called from a kernel",
            sigmoid_v1,
            blocks=(32, 256, 1024),
        ),
    ),
    ref=sigmoid_ref,
    make_inputs=make_inputs,
    check_sizes=((1,), (7,), (1000,), (65537,)),
    bench_size=(2**28,),
    bytes_moved=lambda size: 2 * 4 * size[0],
    tolerance=1e-6,  # expf is within 2 ulp; the result lies in [0, 1]
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
