"""One step of stochastic gradient descent, w - lr * g, with lr in device memory.

python -m thousand.kernels.sgd
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick

OP = "sgd"


def sgd_ref(w: np.ndarray, g: np.ndarray, lr: np.ndarray) -> np.ndarray:
    return w.astype(np.float64) - float(lr[0]) * g.astype(np.float64)


def sgd_v1(w, g, lr, out=None, block=256):
    """Any shape of parameters (a weight matrix, a bias); `out=w` updates in place."""
    check_array(OP, "w", w, ndim=np.ndim(w))  # any shape; a list is refused here
    check_array(OP, "g", g, ndim=w.ndim)
    check_shape(OP, "g", g, w.shape)
    check_array(OP, "lr", lr, ndim=1)
    check_shape(OP, "lr", lr, (1,))
    if out is not None:
        check_array(OP, "out", out, ndim=w.ndim)
        check_shape(OP, "out", out, w.shape)
    check_block(OP, (block,))
    stage = Staging(OP, w, g, lr, names=("w", "g", "lr"))
    dw, dg, dlr = stage.inputs()
    d_out = stage.output(out, w.shape, in_place_ok=True)  # elementwise: out=w works
    n = int(np.prod(w.shape))
    if n:
        launch(
            OP, "sgd_v1", (cdiv(n, block),), (block,), dw, dg, dlr, d_out, np.int32(n)
        )
    return stage.result(d_out, out)


def sgd(w, g, lr, out=None, version=1, block=256):
    return pick(FAMILY, version)(w, g, lr, out=out, block=block)


def make_inputs(rng, size):
    return (
        rng.standard_normal(size, dtype=np.float32),
        rng.standard_normal(size, dtype=np.float32),
        np.array([0.1], dtype=np.float32),
    )


FAMILY = Family(
    name=OP,
    versions=(
        Version(1, "sgd_v1", "one thread per parameter", sgd_v1, blocks=(64, 256)),
    ),
    ref=sgd_ref,
    make_inputs=make_inputs,
    check_sizes=((1,), (7,), (1000,), (65537,)),
    bench_size=(2**26,),
    bytes_moved=lambda size: 3 * 4 * size[0],
    tolerance=1e-6,  # a multiply and a subtract in float32
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
