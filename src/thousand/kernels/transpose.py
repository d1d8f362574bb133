"""Matrix transpose: naive, shared-memory tile, padded tile (bank conflicts), and
the padded tile with its loads unrolled (bytes in flight).

python -m thousand.kernels.transpose
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick

OP = "transpose"
TILE = 32  # as in transpose.cu


def transpose_ref(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a.T)


def _transpose(name, a, out, block, tiled: bool, fixed_block=None):
    check_array(OP, "a", a, ndim=2)  # (rows, cols)
    rows, cols = a.shape
    if out is not None:
        check_array(OP, "out", out, ndim=2)
        check_shape(OP, "out", out, (cols, rows))
    block = check_block(OP, block, ndim=2)
    bx, by = block
    if fixed_block and tuple(block) != fixed_block:
        raise ValueError(
            f"{OP}: {name} is compiled for blocks of {fixed_block}, got {block}"
        )
    if tiled and (bx != TILE or TILE % by):
        raise ValueError(
            f"{OP}: {name} needs blocks of (32, h) with h dividing 32, got {block}"
        )
    # x covers the columns of `a`, y its rows; a tiled block covers a 32 x 32 tile
    grid = (
        (cdiv(cols, TILE), cdiv(rows, TILE))
        if tiled
        else (cdiv(cols, bx), cdiv(rows, by))
    )
    stage = Staging(OP, a, names=("a",))
    (da,) = stage.inputs()
    d_out = stage.output(out, (cols, rows))  # never `a`: threads read what others write
    if rows and cols:
        launch(OP, name, grid, block, da, d_out, np.int32(rows), np.int32(cols))
    return stage.result(d_out, out)


# --8<-- [start:launchers]
def transpose_v1(a, out=None, block=(32, 8)):
    return _transpose("transpose_v1", a, out, block, tiled=False)


def transpose_v2(a, out=None, block=(32, 8)):
    return _transpose("transpose_v2", a, out, block, tiled=True)


def transpose_v3(a, out=None, block=(32, 8)):
    return _transpose("transpose_v3", a, out, block, tiled=True)


def transpose_v4(a, out=None, block=(32, 8)):
    return _transpose("transpose_v4", a, out, block, tiled=True, fixed_block=(32, 8))


# --8<-- [end:launchers]


def transpose(a, out=None, version=4, block=(32, 8)):
    return pick(FAMILY, version)(a, out=out, block=block)


def make_inputs(rng, size):
    return (rng.standard_normal(size, dtype=np.float32),)


TILED_BLOCKS = ((32, 8), (32, 32), (32, 1))
FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "transpose_v1",
            "naive: coalesced reads, strided writes",
            transpose_v1,
            blocks=((32, 8), (16, 16), (8, 32)),
            default_block=(32, 8),
        ),
        Version(
            2,
            "transpose_v2",
            "32 x 32 shared tile: both coalesced, 32-way bank conflicts",
            transpose_v2,
            blocks=TILED_BLOCKS,
            default_block=(32, 8),
        ),
        Version(
            3,
            "transpose_v3",
            "tile padded to 32 x 33: no bank conflicts",
            transpose_v3,
            blocks=TILED_BLOCKS,
            default_block=(32, 8),
        ),
        Version(
            4,
            "transpose_v4",
            "padded tile, rows per thread fixed: all loads in flight at once",
            transpose_v4,
            blocks=((32, 8),),
            default_block=(32, 8),
        ),
    ),
    ref=transpose_ref,
    make_inputs=make_inputs,
    check_sizes=((1, 1), (1, 7), (31, 33), (64, 64), (100, 257), (1023, 1025)),
    bench_size=(8192, 8192),
    bytes_moved=lambda size: 2 * 4 * size[0] * size[1],  # read and write each once
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
