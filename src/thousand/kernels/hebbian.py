"""Hopfield's Hebbian storage: the weights from the patterns, zero diagonal (A5).

python -m thousand.kernels.hebbian
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import (
    Staging,
    cdiv,
    check_array,
    check_block,
    check_index_range,
    check_shape,
    launch,
)
from thousand.kernels.family import Family, Version, pick

OP = "hebbian"


# --8<-- [start:ref]
def hebbian_ref(P: np.ndarray) -> np.ndarray:
    W = P.astype(np.float64).T @ P  # sum over patterns of outer products
    np.fill_diagonal(W, 0.0)
    return W


# --8<-- [end:ref]


def hebbian_v1(P, out=None, block=(32, 8)):
    check_array(OP, "P", P, ndim=2)  # (p, n): one pattern per row
    p, n = P.shape
    check_index_range(OP, "the output", n, n)  # an n x n matrix from a p x n one
    if out is not None:
        check_array(OP, "out", out, ndim=2)
        check_shape(OP, "out", out, (n, n))
    block = check_block(OP, block, ndim=2)
    stage = Staging(OP, P, names=("P",))
    (dP,) = stage.inputs()
    dW = stage.output(out, (n, n))
    if n:
        grid = (cdiv(n, block[0]), cdiv(n, block[1]))
        launch(OP, "hebbian_v1", grid, block, dP, dW, np.int32(p), np.int32(n))
    return stage.result(dW, out)


def hebbian(P, out=None, version=1, block=(32, 8)):
    return pick(FAMILY, version)(P, out=out, block=block)


def make_inputs(rng, size):
    p, n = size
    return (np.where(rng.random((p, n)) < 0.5, -1.0, 1.0).astype(np.float32),)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "hebbian_v1",
            "one thread per weight: a sum of products over the patterns",
            hebbian_v1,
            blocks=((32, 8), (16, 16)),
            default_block=(32, 8),
        ),
    ),
    ref=hebbian_ref,
    make_inputs=make_inputs,
    check_sizes=((1, 1), (3, 7), (5, 64), (13, 100), (40, 333)),  # (p, n)
    bench_size=(64, 4096),
    flops=lambda size: 2 * size[0] * size[1] * size[1],
    tolerance=0.0,  # sums of +-1: exact in float32
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
