"""Sum of a float32 vector: a shared-memory tree, then warp shuffles.

The full ladder of the parallel-reduction article builds on these two rungs.
python -m thousand.kernels.reduce
"""

from __future__ import annotations

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

OP = "reduce"


def reduce_ref(x: np.ndarray) -> np.ndarray:
    """The exact sum (float64), as a 1-element array like the kernels' output."""
    return np.array([x.sum(dtype=np.float64)])


def _reduce(name, x, out, block, *, grid, shared=0, align=None):
    check_array(OP, "x", x, ndim=1)
    if out is not None:
        check_array(OP, "out", out, ndim=1)
        check_shape(OP, "out", out, (1,))
    check_block(OP, (block,))
    if block & (block - 1) or block < 32:
        raise ValueError(f"{OP}: block must be a power of two >= 32, got {block}")
    if align:
        check_aligned(OP, "x", x, align)
    stage = Staging(OP, x)
    (dx,) = stage.inputs()
    d_out = stage.output(out, (1,))
    d_out.fill(0)  # the blocks add into it
    n = x.shape[0]
    if n:
        launch(OP, name, (grid(n),), (block,), dx, d_out, np.int32(n), shared=shared)
    return stage.result(d_out, out)


# --8<-- [start:launchers]
def reduce_v1(x, out=None, block=256):
    return _reduce(
        "reduce_v1",
        x,
        out,
        block,
        grid=lambda n: grid_stride_blocks(block, n),
        shared=4 * block,  # one float per thread
    )


def reduce_v2(x, out=None, block=256):
    return _reduce(
        "reduce_v2",
        x,
        out,
        block,
        grid=lambda n: grid_stride_blocks(block, cdiv(n, 4)),
        align=16,
    )


# --8<-- [end:launchers]


def reduce(x, out=None, version=2, block=256):
    """sum(x) as a 1-element float32 array, on the device."""
    return pick(FAMILY, version)(x, out=out, block=block)


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    # Uniform in [0, 1): no cancellation, so float32 rounding stays near n * 2^-24.
    return (rng.random(size, dtype=np.float32),)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "reduce_v1",
            "shared-memory tree, sequential addressing, one atomic per block",
            reduce_v1,
            blocks=(32, 256, 1024),
        ),
        Version(
            2,
            "reduce_v2",
            "float4 loads, warp shuffles, one atomic per block",
            reduce_v2,
            blocks=(32, 256, 1024),
        ),
    ),
    ref=reduce_ref,
    make_inputs=make_inputs,
    check_sizes=((1,), (3,), (31,), (257,), (4099,), (65537,), (1_000_003,)),
    bench_size=(2**28,),
    bytes_moved=lambda size: 4 * size[0],  # read x once
    # The order of float32 additions differs from NumPy's (and between runs: the
    # atomics land in any order), so allow a relative error of 1e-5.
    tolerance=1e-5,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
