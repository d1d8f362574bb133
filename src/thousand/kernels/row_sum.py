"""Row sums of a matrix, three ways: the layout and the thread mapping of B10.

    row_sum(a)                        # a: (rows, cols) float32, C order; v3
    row_sum(np.asfortranarray(a), version=2)   # v2 reads the matrix column-major

Why the family takes the matrix twice. Every version must get the same inputs (the
checks and benchmarks call `run(*inputs)` the same way for each), but v2 exists to
read a column-major matrix, and a device array is always one C-contiguous buffer.
So the family's inputs are the one logical matrix in both storage orders:

    a     (rows, cols), C-contiguous: row-major, element (i, k) at i * cols + k
    a_cm  (cols, rows), C-contiguous: a.T copied, which is the column-major storage
          of the same matrix, element (i, k) at k * rows + i

v1 and v3 read `a`, v2 reads `a_cm`; the transpose is made once, by make_inputs,
never inside a timed call. The launchers a user calls take the single array their
kernel reads (`row_sum_v2(a_cm)`), and `row_sum(a, version=2)` takes the matrix
itself in Fortran order: its `.T` is `a_cm` without a copy. A strided view or the
wrong order is refused with the reason, never copied behind the caller's back.

python -m thousand.kernels.row_sum
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import (
    Staging,
    cdiv,
    check_array,
    check_block,
    check_shape,
    fill,
    launch,
)
from thousand.kernels.family import Family, Version

OP = "row_sum"


# --8<-- [start:ref]
def row_sum_ref(a: np.ndarray, a_cm: np.ndarray | None = None) -> np.ndarray:
    """Each row summed in float64, then rounded once to float32."""
    if a_cm is not None and a_cm.shape != a.shape[::-1]:
        raise ValueError(f"{OP}: a_cm must have shape {a.shape[::-1]}")
    return a.astype(np.float64).sum(axis=1).astype(np.float32)


# --8<-- [end:ref]


def _run(name, x, out, block, rows, cols, rows_per_block):
    if out is not None:
        check_array(OP, "out", out, ndim=1)
        check_shape(OP, "out", out, (rows,))
    check_block(OP, (block,))
    stage = Staging(OP, x)
    (dx,) = stage.inputs()
    d_out = stage.output(out, (rows,))
    if rows and cols:
        grid = (cdiv(rows, rows_per_block),)
        launch(OP, name, grid, (block,), dx, d_out, np.int32(rows), np.int32(cols))
    elif rows:  # no columns: every sum is empty, and an empty array has no address
        fill(d_out, 0.0)
    return stage.result(d_out, out)


# --8<-- [start:launchers]
def row_sum_v1(a, out=None, block=256):
    """a: (rows, cols) row-major. One thread per row."""
    check_array(OP, "a", a, ndim=2)
    rows, cols = a.shape
    return _run("row_sum_v1", a, out, block, rows, cols, rows_per_block=block)


def row_sum_v2(a_cm, out=None, block=256):
    """a_cm: (cols, rows), the matrix stored column-major. One thread per row."""
    check_array(OP, "a_cm", a_cm, ndim=2)
    cols, rows = a_cm.shape
    return _run("row_sum_v2", a_cm, out, block, rows, cols, rows_per_block=block)


def row_sum_v3(a, out=None, block=256):
    """a: (rows, cols) row-major. One warp per row."""
    check_array(OP, "a", a, ndim=2)
    (block,) = check_block(OP, block, ndim=1)  # an int before any arithmetic
    if block % 32:
        raise ValueError(f"{OP}: row_sum_v3 needs whole warps, got a block of {block}")
    rows, cols = a.shape
    return _run("row_sum_v3", a, out, block, rows, cols, rows_per_block=block // 32)


# --8<-- [end:launchers]


# --8<-- [start:front-door]
def row_sum(a, out=None, version=3, block=256):
    """The sum of every row of the (rows, cols) float32 matrix `a`.

    Versions 1 and 3 read `a` row-major, so it must be C-contiguous. Version 2 reads
    it column-major, so it must be F-contiguous: then `a.T` is a C-contiguous
    (cols, rows) array over the same memory, and the kernel gets it without a copy.
    """
    if version != 2:
        return FAMILY.version(version).run(a, None, out=out, block=block)
    if not (isinstance(a, np.ndarray) and a.ndim == 2 and a.flags.f_contiguous):
        raise ValueError(
            f"{OP}: version 2 reads the matrix column-major: pass a NumPy array in "
            "Fortran order (np.asfortranarray(a)), or call row_sum_v2 with the "
            "(cols, rows) buffer as stored"
        )
    return row_sum_v2(a.T, out=out, block=block)


# --8<-- [end:front-door]


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    rows, cols = size
    # Uniform in [0, 1): no cancellation, so float32 rounding stays near cols * 2^-24.
    a = rng.random((rows, cols), dtype=np.float32)
    return a, np.ascontiguousarray(a.T)  # the matrix row-major, and column-major


def _on(layout: str, launcher):
    """The family's form of a launcher: run(a, a_cm, ...) reads the layout it needs."""
    if layout == "row-major":
        return lambda a, a_cm, out=None, block=256: launcher(a, out=out, block=block)
    return lambda a, a_cm, out=None, block=256: launcher(a_cm, out=out, block=block)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "row_sum_v1",
            "one thread per row, row-major: neighbours a row apart, uncoalesced",
            _on("row-major", row_sum_v1),
            blocks=(32, 256, 1024),
        ),
        Version(
            2,
            "row_sum_v2",
            "one thread per row, column-major: neighbours adjacent, coalesced",
            _on("column-major", row_sum_v2),
            blocks=(32, 256, 1024),
        ),
        Version(
            3,
            "row_sum_v3",
            "one warp per row, row-major: coalesced, warp-shuffle sum",
            _on("row-major", row_sum_v3),
            blocks=(32, 256, 1024),
        ),
    ),
    ref=row_sum_ref,
    make_inputs=make_inputs,
    # (rows, cols): single rows and columns, primes, tall, wide, nothing a warp divides
    check_sizes=(
        (1, 1),
        (1, 7),
        (7, 1),
        (31, 33),
        (100, 257),
        (257, 100),
        (13, 8009),
        (1000, 131),
        (4099, 257),
        (1023, 1025),
    ),
    # Tall enough that one thread per row still fills the GPU (2^18 threads).
    bench_size=(2**18, 256),
    bytes_moved=lambda size: 4 * size[0] * size[1] + 4 * size[0],  # read a, write out
    # Rows of up to 8,009 floats in [0, 1), added in float32 in another order than
    # the float64 sum (one by one in v1 and v2; 32 strided partials and a tree in
    # v3). One by one, the rounding error of 8,009 terms stays under 4e-6 of the
    # largest row sum (2,000 rows tried); longer rows need a looser bound.
    tolerance=1e-5,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
