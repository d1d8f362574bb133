"""Strided gather: out[i] = x[i * stride], the coalescing experiment of B6.

python -m thousand.kernels.strided
"""

from __future__ import annotations

import numbers

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, launch
from thousand.kernels.family import Family, Version, pick

OP = "strided"


def strided_ref(x: np.ndarray, stride: int = 1, n: int | None = None) -> np.ndarray:
    return np.ascontiguousarray(x[::stride][:n])


def outputs(length: int, stride: int) -> int:
    """How many outputs a stride leaves in an input of `length`: len(x[::stride])."""
    return cdiv(length, stride)


def _check_stride(stride) -> int:
    if isinstance(stride, bool) or not isinstance(stride, numbers.Integral):
        raise ValueError(f"{OP}: `stride` must be an integer, got {stride!r}")
    if stride < 1:
        raise ValueError(f"{OP}: `stride` must be at least 1, got {stride}")
    return int(stride)


# --8<-- [start:launchers]
def strided_v1(x, out=None, block=256, stride=1, n=None):
    """out[i] = x[i * stride] for i < n: n is len(out), or given, or len(x[::s])."""
    check_array(OP, "x", x, ndim=1)
    stride = _check_stride(stride)
    if out is not None:
        check_array(OP, "out", out, ndim=1)
        if n is not None and n != out.shape[0]:
            raise ValueError(f"{OP}: n = {n} but `out` has {out.shape[0]} elements")
        n = out.shape[0]
    elif n is None:
        n = outputs(x.shape[0], stride)
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"{OP}: `n` must be a whole number >= 0, got {n!r}")
    if n and (n - 1) * stride >= x.shape[0]:
        raise ValueError(
            f"{OP}: {n} outputs at stride {stride} read x[{(n - 1) * stride}], "
            f"but x has {x.shape[0]} elements"
        )
    check_block(OP, (block,))
    stage = Staging(OP, x)
    (dx,) = stage.inputs()
    d_out = stage.output(out, (n,))
    if n:
        grid = (cdiv(n, block),)
        launch(
            OP, "strided_v1", grid, (block,), dx, d_out, np.int32(n), np.int32(stride)
        )
    return stage.result(d_out, out)


# --8<-- [end:launchers]


def strided(x, out=None, version=1, block=256, stride=1, n=None):
    return pick(FAMILY, version)(x, out=out, block=block, stride=stride, n=n)


def make_inputs(rng, size):
    (n,) = size
    return (rng.standard_normal(n, dtype=np.float32),)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "strided_v1",
            "one thread per output, a constant stride between loads",
            strided_v1,
            blocks=(128, 256, 1024),
        ),
    ),
    ref=strided_ref,
    make_inputs=make_inputs,
    check_sizes=((1,), (5,), (1023,), (65541,), (1_000_003,)),
    # The family's own check and timing use stride 1 (a copy); the B6 experiment
    # (thousand.experiments.b6_strides) measures the other strides.
    bench_size=(2**28,),  # as the copy kernel, so the two compare
    bytes_moved=lambda size: 2 * 4 * size[0],  # the useful bytes: n read, n written
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
