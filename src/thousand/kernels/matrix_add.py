"""Matrix add on a 2-D grid.

python -m thousand.kernels.matrix_add
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick

OP = "matrix_add"


def matrix_add_ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a + b


# --8<-- [start:launcher]
def matrix_add_v1(a, b, out=None, block=(32, 8)):
    check_array(OP, "a", a, ndim=2)  # (M, N)
    check_array(OP, "b", b, ndim=2)  # (M, N)
    check_shape(OP, "b", b, a.shape)
    if out is not None:
        check_array(OP, "out", out, ndim=2)
        check_shape(OP, "out", out, a.shape)
    block = check_block(OP, block, ndim=2)
    M, N = a.shape
    bx, by = block
    grid = (cdiv(N, bx), cdiv(M, by))  # x covers the columns, y the rows
    stage = Staging(OP, a, b, names=("a", "b"))
    da, db = stage.inputs()
    d_out = stage.output(out, a.shape, in_place_ok=True)  # elementwise: out=a works
    if M and N:
        launch(
            OP, "matrix_add_v1", grid, block, da, db, d_out, np.int32(M), np.int32(N)
        )
    return stage.result(d_out, out)


# --8<-- [end:launcher]


def matrix_add(a, b, out=None, version=1, block=(32, 8)):
    return pick(FAMILY, version)(a, b, out=out, block=block)


def make_inputs(rng, size):
    return (
        rng.standard_normal(size, dtype=np.float32),
        rng.standard_normal(size, dtype=np.float32),
    )


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "matrix_add_v1",
            "2-D grid of 2-D blocks, x along the rows",
            matrix_add_v1,
            blocks=((32, 8), (16, 16), (8, 4), (32, 32)),
            default_block=(32, 8),
        ),
    ),
    ref=matrix_add_ref,
    make_inputs=make_inputs,
    check_sizes=((1, 1), (3, 5), (31, 33), (100, 257), (1023, 1025)),
    bench_size=(16384, 16384),
    bytes_moved=lambda size: 3 * 4 * size[0] * size[1],
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
