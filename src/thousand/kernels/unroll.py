"""Loop unrolling, four ways, on column sums: out[j] = x[0, j] + ... + x[K-1, j].

    unroll(x)                   # x: (K, n) float32, C-contiguous -> (n,) float32

python -m thousand.kernels.unroll
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick

OP = "unroll"
V2_ROWS = 16  # UNROLL_K in unroll.cu: the only K that v2 is compiled for
V4_ROWS = (1, 2, 4, 8, 16, 32)  # the K that v4 has an unrolled instance for
UNIT_ROUNDOFF = 2.0**-24  # float32


# --8<-- [start:ref]
def unroll_ref(x: np.ndarray) -> np.ndarray:
    """Column sums added row by row in float32: the order, so also the rounding, of
    v1, v2 and v4, which must match it bit for bit."""
    acc = np.zeros(x.shape[1], dtype=np.float32)  # (n,)
    for row in x:  # K rows, first to last
        acc += row
    return acc


# --8<-- [end:ref]


def reorder_bound(k: int) -> float:
    """How far another order of adding k numbers in [0, 1) can land from the row by
    row order, relative to the sum: each is within gamma_k = k u / (1 - k u) of the
    exact sum (Higham, Accuracy and Stability of Numerical Algorithms, 2002, 4.2),
    so the two are within twice that."""
    return 2 * k * UNIT_ROUNDOFF / (1 - k * UNIT_ROUNDOFF)


def _unroll(name, x, out, block, pass_k: bool):
    check_array(OP, "x", x, ndim=2)  # (K, n)
    k, n = x.shape
    if out is not None:
        check_array(OP, "out", out, ndim=1)
        check_shape(OP, "out", out, (n,))
    check_block(OP, (block,))
    stage = Staging(OP, x)
    (dx,) = stage.inputs()
    d_out = stage.output(out, (n,))
    if n:
        args = (dx, d_out, np.int32(n)) + ((np.int32(k),) if pass_k else ())
        launch(OP, name, (cdiv(n, block),), (block,), *args)
    return stage.result(d_out, out)


# --8<-- [start:launchers]
# One thread per column: a grid of ceil(n / block) blocks. v1, v3 and v4 take K as
# a kernel argument; v2 has it compiled in and refuses any other.
def unroll_v1(x, out=None, block=256):
    return _unroll("unroll_v1", x, out, block, pass_k=True)


def unroll_v2(x, out=None, block=256):
    check_array(OP, "x", x, ndim=2)  # an array before its shape is read
    if x.shape[0] != V2_ROWS:
        raise ValueError(
            f"{OP}: unroll_v2 is compiled for K = {V2_ROWS} rows (UNROLL_K in "
            f"unroll.cu), got {x.shape[0]}; v1, v3 and v4 take any K"
        )
    return _unroll("unroll_v2", x, out, block, pass_k=False)


def unroll_v3(x, out=None, block=256):
    return _unroll("unroll_v3", x, out, block, pass_k=True)


def unroll_v4(x, out=None, block=256):
    return _unroll("unroll_v4", x, out, block, pass_k=True)


# --8<-- [end:launchers]


def unroll(x, out=None, version=4, block=256):
    """Column sums of a (K, n) float32 matrix on the GPU with the chosen version."""
    return pick(FAMILY, version)(x, out=out, block=block)


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    # In [0, 1): no cancellation, so reorder_bound holds relative to the sums.
    return (rng.random(size, dtype=np.float32),)  # (K, n)


BLOCKS = (64, 256, 1024)
FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "unroll_v1",
            "a loop kept a loop (#pragma unroll 1): one load in flight",
            unroll_v1,
            blocks=BLOCKS,
        ),
        Version(
            2,
            "unroll_v2",
            "#pragma unroll over a compile-time trip count: 16 loads in flight",
            unroll_v2,
            blocks=BLOCKS,
        ),
        Version(
            3,
            "unroll_v3",
            "unrolled by hand by 4: four accumulators and a remainder loop",
            unroll_v3,
            blocks=BLOCKS,
            # Added in another order: not bit-exact, within reorder_bound.
            tolerance=reorder_bound(V2_ROWS),
        ),
        Version(
            4,
            "unroll_v4",
            "template<int K>: a fully unrolled instance per K",
            unroll_v4,
            blocks=BLOCKS,
        ),
    ),
    ref=unroll_ref,
    make_inputs=make_inputs,
    # K is v2's 16 throughout (tests/unroll_cases.py tries other K on v1, v3, v4);
    # the columns are 1, primes and ragged counts.
    check_sizes=(
        (V2_ROWS, 1),
        (V2_ROWS, 7),
        (V2_ROWS, 31),
        (V2_ROWS, 257),
        (V2_ROWS, 4099),
        (V2_ROWS, 65537),
        (V2_ROWS, 1_000_003),
    ),
    bench_size=(V2_ROWS, 2**24),
    bytes_moved=lambda size: 4 * (size[0] + 1) * size[1],  # read x, write out
    tolerance=0.0,  # bit-exact: v1, v2 and v4 add in the reference's order
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
