"""Rosenblatt's perceptron rule (A2): one epoch over the samples, in order, on the GPU.

python -m thousand.kernels.perceptron
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick

OP = "perceptron"


# --8<-- [start:ref]
def perceptron_ref(X: np.ndarray, y: np.ndarray, w0: np.ndarray) -> np.ndarray:
    """One epoch: for each sample in order, a mistake moves w (and the bias w[-1])."""
    w = w0.astype(np.float64).copy()
    for x_i, y_i in zip(X.astype(np.float64), y, strict=True):
        if y_i * (w[:-1] @ x_i + w[-1]) <= 0:
            w[:-1] += y_i * x_i
            w[-1] += y_i
    return w


# --8<-- [end:ref]


def perceptron_v1(X, y, w0, out=None, block=128):
    check_array(OP, "X", X, ndim=2)  # (n, d)
    n, d = X.shape
    check_array(OP, "y", y, ndim=1)
    check_shape(OP, "y", y, (n,))
    check_array(OP, "w0", w0, ndim=1)
    check_shape(OP, "w0", w0, (d + 1,))
    if out is not None:
        check_array(OP, "out", out, ndim=1)
        check_shape(OP, "out", out, (d + 1,))
    check_block(OP, (block,))
    if block & (block - 1):
        raise ValueError(f"{OP}: block must be a power of two, got {block}")
    stage = Staging(OP, X, y, w0)
    dX, dy, dw0 = stage.inputs()
    d_out = stage.output(out, (d + 1,))
    # One block: the samples are a chain, each update starts from the last one.
    launch(
        OP, "perceptron_v1", (1,), (block,), dX, dy, dw0, d_out, np.int32(n),
        np.int32(d), shared=4 * block,
    )  # fmt: skip
    return stage.result(d_out, out)


def perceptron(X, y, w0, out=None, version=1, block=128):
    return pick(FAMILY, version)(X, y, w0, out=out, block=block)


def make_inputs(rng, size):
    # Small integers: every sum is exact in float32 and in float64, so the kernel
    # and the reference make the same decisions, mistake for mistake.
    n, d = size
    X = rng.integers(-4, 5, (n, d)).astype(np.float32)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0).astype(np.float32)
    w0 = rng.integers(-2, 3, d + 1).astype(np.float32)
    return X, y, w0


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "perceptron_v1",
            "one block, samples in order: a tree sum per sample, then the update",
            perceptron_v1,
            blocks=(32, 128),
            default_block=128,
        ),
    ),
    ref=perceptron_ref,
    make_inputs=make_inputs,
    check_sizes=((1, 1), (4, 2), (50, 3), (200, 37), (1000, 130)),
    bench_size=(4096, 1024),
    bytes_moved=lambda size: 4 * (size[0] * size[1] + size[0] + 2 * (size[1] + 1)),
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
