"""2 x 2 average pooling, stride 2, NHWC: LeNet-5's subsampling (A6).

python -m thousand.kernels.avg_pool
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick

OP = "avg_pool"


def avg_pool_ref(X: np.ndarray) -> np.ndarray:
    N, H, W, C = X.shape
    P, Q = H // 2, W // 2
    windows = X[:, : 2 * P, : 2 * Q, :].astype(np.float64).reshape(N, P, 2, Q, 2, C)
    return windows.mean(axis=(2, 4))


def avg_pool_v1(X, out=None, block=256):
    check_array(OP, "X", X, ndim=4)  # (N, H, W, C)
    N, H, W, C = X.shape
    shape = (N, H // 2, W // 2, C)
    if out is not None:
        check_array(OP, "out", out, ndim=4)
        check_shape(OP, "out", out, shape)
    check_block(OP, (block,))
    stage = Staging(OP, X)
    (dX,) = stage.inputs()
    dY = stage.output(out, shape)
    if dY.size:
        ints = [np.int32(v) for v in (N, H, W, C)]
        launch(OP, "avg_pool_v1", (cdiv(dY.size, block),), (block,), dX, dY, *ints)
    return stage.result(dY, out)


def avg_pool(X, out=None, version=1, block=256):
    return pick(FAMILY, version)(X, out=out, block=block)


def make_inputs(rng, size):
    return (rng.standard_normal(size, dtype=np.float32),)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "avg_pool_v1",
            "one thread per output: the mean of a 2 x 2 window",
            avg_pool_v1,
            blocks=(64, 256),
        ),
    ),
    ref=avg_pool_ref,
    make_inputs=make_inputs,
    # (N, H, W, C): odd sizes leave the last row or column out
    check_sizes=((1, 2, 2, 1), (1, 3, 5, 2), (2, 28, 28, 6), (3, 10, 11, 16)),
    bench_size=(256, 28, 28, 64),
    bytes_moved=lambda size: 4 * int(np.prod(size)) * 5 // 4,  # read X, write X/4
    # three float32 additions and a multiply by 1/4 (exact)
    tolerance=1e-6,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
