"""The gradient of max pooling: each dY goes to its window's winner (A10, A11).

    dX = max_pool_backward(dY, argmax, (H, W), geom)

python -m thousand.kernels.max_pool_backward
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick
from thousand.kernels.global_avg_pool_backward import check_hw
from thousand.kernels.max_pool import (
    POOL_2X2,
    PoolGeometry,
    check_geometry,
    max_pool_parts,
)

OP = "max_pool_backward"


def max_pool_backward_ref(
    dY: np.ndarray, argmax: np.ndarray, hw, geom: PoolGeometry = POOL_2X2
) -> np.ndarray:
    """A scatter in float64: every dY added at its argmax."""
    N, P, Q, C = dY.shape
    H, W = hw
    dX = np.zeros((N, H * W, C))
    n = np.arange(N)[:, None, None, None]
    c = np.arange(C)[None, None, None, :]
    np.add.at(dX, (n, argmax, c), dY.astype(np.float64))
    return dX.reshape(N, H, W, C)


def max_pool_backward_v1(dY, argmax, hw, geom=POOL_2X2, out=None, block=256):
    """dY and argmax (N, P, Q, C), hw = the input's (H, W) -> dX (N, H, W, C)."""
    check_array(OP, "dY", dY, ndim=4)  # (N, P, Q, C)
    check_array(OP, "argmax", argmax, ndim=4, dtype=np.int32)
    check_shape(OP, "argmax", argmax, dY.shape)
    H, W = check_hw(OP, hw)
    geom = check_geometry(OP, geom)
    N, P, Q, C = dY.shape
    if geom.check(OP, H, W) != (P, Q):
        raise ValueError(
            f"{OP}: `hw` = ({H}, {W}) pooled by {geom} gives "
            f"{geom.output_hw(H, W)} outputs, but `dY` is {P} x {Q}"
        )
    shape = (N, H, W, C)
    if out is not None:
        check_array(OP, "out", out, ndim=4)
        check_shape(OP, "out", out, shape)
    check_block(OP, block, ndim=1)
    stage = Staging(OP, dY, argmax, names=("dY", "argmax"))
    d_dY, d_arg = stage.inputs()
    dX = stage.output(out, shape)
    if dX.size:
        geometry = (geom.window, geom.stride, geom.pad)
        ints = [np.int32(v) for v in (N, H, W, C, P, Q, *geometry)]
        grid = (cdiv(dX.size, block),)
        launch(OP, "max_pool_backward_v1", grid, (block,), d_dY, d_arg, dX, *ints)
    return stage.result(dX, out)


def max_pool_backward(dY, argmax, hw, geom=POOL_2X2, out=None, version=1, block=256):
    return pick(FAMILY, version)(dY, argmax, hw, geom, out=out, block=block)


def make_inputs(rng, size):
    """size (N, H, W, C, window, stride, pad) of the forward; the argmax of X of
    whole numbers (ties), so pixels that win several windows are common."""
    N, H, W, C, k, s, pad = size
    geom = PoolGeometry(k, s, pad)
    X = rng.integers(-3, 4, (N, H, W, C)).astype(np.float64)
    _, argmax = max_pool_parts(X, geom)
    dY = rng.standard_normal(argmax.shape, dtype=np.float32)
    return dY, argmax, (H, W), geom


def bytes_moved(size):
    """Read dY and argmax once (4 bytes each), write dX."""
    N, H, W, C = size[:4]
    P, Q = PoolGeometry(*size[4:]).output_hw(H, W)
    return 4 * N * C * (2 * P * Q + H * W)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "max_pool_backward_v1",
            "a gather: each input sums the dY of the windows it won, no atomics",
            max_pool_backward_v1,
            blocks=(64, 256),
        ),
    ),
    ref=max_pool_backward_ref,
    make_inputs=make_inputs,
    check_sizes=(
        (1, 1, 1, 1, 1, 1, 0),
        (1, 2, 2, 1, 2, 2, 0),
        (2, 5, 7, 3, 2, 2, 0),
        (2, 7, 9, 5, 3, 2, 0),
        (3, 11, 10, 17, 3, 2, 1),
        (1, 4, 6, 2, 5, 1, 2),
        (2, 13, 13, 33, 3, 1, 1),
        (1, 3, 3, 2, 3, 3, 1),
    ),
    bench_size=(32, 56, 56, 64, 3, 2, 1),
    bytes_moved=bytes_moved,
    # up to window^2 float32 additions per input (3 x 3 stride 1: 9)
    tolerance=1e-6,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
