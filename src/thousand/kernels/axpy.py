"""AX+Y (SAXPY): out = a * x + y, the running example of B2, "How a GPU works".

python -m thousand.kernels.axpy     # check every version, then time it
"""

from __future__ import annotations

import functools
import numbers

import numpy as np

from thousand.cuda import (
    Staging,
    cdiv,
    check_aligned,
    check_array,
    check_block,
    check_shape,
    grid_stride_blocks,
    launch,
)
from thousand.kernels.family import Family, Version, pick
from thousand.kernels.vector_add import make_inputs  # x and y: the same two vectors

OP = "axpy"
A = 0.7  # the `a` the checks and benchmarks use: a * x is rarely exact in float32


# --8<-- [start:ref]
def axpy_ref(a, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """a * x + y rounded once to float32, as one fused multiply-add (fmaf) rounds."""
    p = np.float64(np.float32(a)) * x.astype(np.float64)  # exact: 24 + 24 bits <= 53
    y64 = y.astype(np.float64)
    s = p + y64  # rounded to float64: the first of two roundings
    t = s - p
    e = (p - (s - t)) + (y64 - t)  # TwoSum: the exact error, p + y == s + e
    r = s.astype(np.float32)  # the second rounding
    # Twice rounded differs from once rounded only where s lies exactly halfway
    # between two float32s; then e tells which side the exact sum lies on.
    side = np.where(s > r, np.inf, -np.inf).astype(np.float32)
    other = np.nextafter(r, side)
    halfway = (r.astype(np.float64) + other.astype(np.float64)) / 2 == s
    return np.where(halfway & (e != 0) & ((e > 0) == (s > r)), other, r)


# --8<-- [end:ref]


def _scalar(a) -> np.float32:
    if isinstance(a, bool) or not isinstance(a, numbers.Real):
        raise ValueError(
            f"{OP}: `a` must be a real number (a Python or NumPy scalar), "
            f"got {type(a).__name__}"
        )
    return np.float32(a)


def _axpy(name, a, x, y, out, block, grid_for, align=None):
    a = _scalar(a)
    check_array(OP, "x", x, ndim=1)
    named = {"y": y} if out is None else {"y": y, "out": out}
    for arg, v in named.items():
        check_array(OP, arg, v, ndim=1)
        check_shape(OP, arg, v, x.shape)
    check_block(OP, (block,))
    if align:
        for arg, v in {"x": x, **named}.items():
            check_aligned(OP, arg, v, align)
    n = x.shape[0]
    stage = Staging(OP, x, y, names=("x", "y"))
    dx, dy = stage.inputs()
    d_out = stage.output(out, x.shape, in_place_ok=True)  # out=y: in place
    if n:
        launch(OP, name, (grid_for(n),), (block,), a, dx, dy, d_out, np.int32(n))
    return stage.result(d_out, out)


# --8<-- [start:launchers]
# The kernels take a as a float32 argument: PyCUDA passes a np.float32 by value.
def axpy_v1(a, x, y, out=None, block=256):
    return _axpy("axpy_v1", a, x, y, out, block, lambda n: cdiv(n, block))


def axpy_v2(a, x, y, out=None, block=256):
    return _axpy(
        "axpy_v2",
        a,
        x,
        y,
        out,
        block,
        lambda n: grid_stride_blocks(block, cdiv(n, 4)),  # one full wave at most
        align=16,
    )


# --8<-- [end:launchers]


def axpy(a, x, y, out=None, version=2, block=256):
    """out = a * x + y on the device (out=y updates y in place)."""
    pick(FAMILY, version)  # a clear error for a version that does not exist
    return LAUNCHERS[version](a, x, y, out=out, block=block)


LAUNCHERS = {1: axpy_v1, 2: axpy_v2}


def _fixed_a(launcher):
    """The launcher with a = A, in the form the checks and benchmarks call."""

    @functools.wraps(launcher)
    def run(x, y, out=None, block=256):
        return launcher(A, x, y, out=out, block=block)

    return run


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "axpy_v1",
            "one thread per element, bounds check, one fused multiply-add",
            _fixed_a(axpy_v1),
            blocks=(32, 256, 1024),
        ),
        Version(
            2,
            "axpy_v2",
            "grid-stride loop over float4, scalar tail",
            _fixed_a(axpy_v2),
            blocks=(32, 256, 1024),
        ),
    ),
    ref=functools.partial(axpy_ref, A),
    make_inputs=make_inputs,
    check_sizes=((1,), (3,), (5,), (257,), (4099,), (65537,), (1_000_003,)),
    bench_size=(2**28,),
    bytes_moved=lambda size: 3 * 4 * size[0],  # read x and y, write out
    tolerance=0.0,  # fmaf rounds once, and so does the reference
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
