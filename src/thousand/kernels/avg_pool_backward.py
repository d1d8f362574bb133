"""The gradient of 2 x 2 average pooling: each input gets a quarter of its output's.

python -m thousand.kernels.avg_pool_backward
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, launch
from thousand.kernels.family import Family, Version, pick

OP = "avg_pool_backward"


def avg_pool_backward_ref(dY: np.ndarray) -> np.ndarray:
    return np.repeat(np.repeat(dY.astype(np.float64), 2, axis=1), 2, axis=2) / 4


def avg_pool_backward_v1(dY, out=None, block=256):
    """dX has twice the rows and columns of dY; pass `out` with one more row or
    column when the pooled input had an odd size (that last one gets 0)."""
    check_array(OP, "dY", dY, ndim=4)  # (N, P, Q, C)
    N, P, Q, C = dY.shape
    shape = (N, 2 * P, 2 * Q, C)
    if out is not None:
        check_array(OP, "out", out, ndim=4)
        n, H, W, c = out.shape
        if (n, H // 2, W // 2, c) != (N, P, Q, C):
            raise ValueError(
                f"{OP}: `out` of shape {tuple(out.shape)} is not the input of a "
                f"pooling that gave `dY` of shape {tuple(dY.shape)}"
            )
        shape = tuple(out.shape)
    check_block(OP, (block,))
    stage = Staging(OP, dY)
    (d_dY,) = stage.inputs()
    dX = stage.output(out, shape)
    if dX.size:
        ints = [np.int32(v) for v in (N, shape[1], shape[2], C)]
        grid = (cdiv(dX.size, block),)
        launch(OP, "avg_pool_backward_v1", grid, (block,), d_dY, dX, *ints)
    return stage.result(dX, out)


def avg_pool_backward(dY, out=None, version=1, block=256):
    return pick(FAMILY, version)(dY, out=out, block=block)


def make_inputs(rng, size):
    return (rng.standard_normal(size, dtype=np.float32),)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "avg_pool_backward_v1",
            "one thread per input: a quarter of its window's gradient",
            avg_pool_backward_v1,
            blocks=(64, 256),
        ),
    ),
    ref=avg_pool_backward_ref,
    make_inputs=make_inputs,
    check_sizes=((1, 1, 1, 1), (1, 3, 5, 2), (2, 14, 14, 6), (3, 5, 5, 16)),
    bench_size=(256, 14, 14, 64),  # (N, P, Q, C) of dY
    bytes_moved=lambda size: 4 * int(np.prod(size)) * 5,  # read dY, write 4x
    tolerance=0.0,  # a multiply by 1/4 is exact: bit for bit
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
