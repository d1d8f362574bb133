"""The McCulloch–Pitts threshold unit (A1): fire (1) when w . x reaches theta.

python -m thousand.kernels.threshold
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick

OP = "threshold"


# --8<-- [start:ref]
def threshold_ref(X: np.ndarray, w: np.ndarray, theta: np.ndarray) -> np.ndarray:
    s = X.astype(np.float64) @ w.astype(np.float64)
    return (s >= theta[0]).astype(np.float32)


# --8<-- [end:ref]


def threshold_v1(X, w, theta, out=None, block=256):
    check_array(OP, "X", X, ndim=2)  # (n, d): one input per row
    n, d = X.shape
    check_array(OP, "w", w, ndim=1)
    check_shape(OP, "w", w, (d,))
    check_array(OP, "theta", theta, ndim=1)
    check_shape(OP, "theta", theta, (1,))
    if out is not None:
        check_array(OP, "out", out, ndim=1)
        check_shape(OP, "out", out, (n,))
    check_block(OP, (block,))
    stage = Staging(OP, X, w, theta)
    dX, dw, dtheta = stage.inputs()
    d_out = stage.output(out, (n,))
    if n:
        grid = (cdiv(n, block),)
        launch(
            OP,
            "threshold_v1",
            grid,
            (block,),
            dX,
            dw,
            dtheta,
            d_out,
            np.int32(n),
            np.int32(d),
        )
    return stage.result(d_out, out)


def threshold(X, w, theta, out=None, version=1, block=256):
    return pick(FAMILY, version)(X, w, theta, out=out, block=block)


def make_inputs(rng, size):
    # Binary inputs and small integer weights, as McCulloch and Pitts had them: every
    # sum is exact in float32, so a sum that lands on theta fires on both sides.
    n, d = size
    X = rng.integers(0, 2, (n, d)).astype(np.float32)
    w = rng.integers(-3, 4, d).astype(np.float32)
    theta = np.array([rng.integers(-d, d + 1)], dtype=np.float32)
    return X, w, theta


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "threshold_v1",
            "one thread per input: a weighted sum, then all or nothing",
            threshold_v1,
            blocks=(32, 256),
        ),
    ),
    ref=threshold_ref,
    make_inputs=make_inputs,
    check_sizes=((1, 1), (4, 2), (37, 3), (1000, 7), (65537, 2)),
    bench_size=(2**22, 16),
    bytes_moved=lambda size: 4 * (size[0] * size[1] + size[1] + 1 + size[0]),
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
