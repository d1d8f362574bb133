"""relu(A + B): a residual block's shortcut added in, then its ReLU (A11).

python -m thousand.kernels.add_relu
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick

OP = "add_relu"


def add_relu_ref(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return np.maximum(A.astype(np.float64) + B, 0.0)


def add_relu_v1(A, B, out=None, block=256):
    """Any shape, A and B alike; `out` may be A or B (in place)."""
    ndim = getattr(A, "ndim", 1)  # a list: check_array names it
    check_array(OP, "A", A, ndim=ndim)
    check_array(OP, "B", B, ndim=ndim)
    check_shape(OP, "B", B, A.shape)
    if out is not None:
        check_array(OP, "out", out, ndim=ndim)
        check_shape(OP, "out", out, A.shape)
    check_block(OP, block, ndim=1)
    stage = Staging(OP, A, B, names=("A", "B"))
    dA, dB = stage.inputs()
    dY = stage.output(out, A.shape, in_place_ok=True)
    if dY.size:
        grid = (cdiv(dY.size, block),)
        launch(OP, "add_relu_v1", grid, (block,), dA, dB, dY, np.int32(dY.size))
    return stage.result(dY, out)


def add_relu(A, B, out=None, version=1, block=256):
    return pick(FAMILY, version)(A, B, out=out, block=block)


def make_inputs(rng, size):
    A = rng.standard_normal(size, dtype=np.float32)
    B = rng.standard_normal(size, dtype=np.float32)
    return A, B


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "add_relu_v1",
            "one thread per element: the shortcut added, then the ReLU, one pass",
            add_relu_v1,
            blocks=(64, 256),
        ),
    ),
    ref=add_relu_ref,
    make_inputs=make_inputs,
    # any shape: one element, primes, an NHWC map with odd sides
    check_sizes=((1,), (7, 13), (1, 1, 1, 1), (3, 5, 7, 11), (2, 9, 9, 64)),
    bench_size=(32, 56, 56, 64),
    bytes_moved=lambda size: 3 * 4 * int(np.prod(size)),  # read A and B, write Y
    tolerance=1e-7,  # one float32 addition: half an ulp, 2^-24 of the sum
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
