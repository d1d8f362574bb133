"""Vector add, four ways: the first kernel of the B1 article.

python -m thousand.kernels.vector_add     # check every version, then time it
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import cdiv, grid_stride_blocks, launch_1d
from thousand.kernels.family import Family, Version, pick

OP = "vector_add"


# --8<-- [start:ref]
def vector_add_ref(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """NumPy reference: float32 + float32 rounds exactly like the GPU does."""
    return x + y


# --8<-- [end:ref]


# --8<-- [start:launchers]
# Each launcher checks its input, then chooses the grid: how many blocks of `block`
# threads. The kernel gets x, y, out and n; NumPy arrays are copied in and out.
def vector_add_v1(x, y, out=None, block=256):
    return launch_1d(
        OP, "vector_add_v1", {"x": x, "y": y}, out, block, grid_for=lambda n: 1
    )


def vector_add_v2(x, y, out=None, block=256):
    return launch_1d(
        OP,
        "vector_add_v2",
        {"x": x, "y": y},
        out,
        block,
        grid_for=lambda n: cdiv(n, block),
    )


def vector_add_v3(x, y, out=None, block=256):
    return launch_1d(
        OP,
        "vector_add_v3",
        {"x": x, "y": y},
        out,
        block,
        grid_for=lambda n: grid_stride_blocks(block, n),
    )


def vector_add_v4(x, y, out=None, block=256):
    return launch_1d(
        OP,
        "vector_add_v4",
        {"x": x, "y": y},
        out,
        block,
        grid_for=lambda n: grid_stride_blocks(block, cdiv(n, 4)),
        align=16,
    )


def vector_add_v5(x, y, out=None, block=256):
    return launch_1d(
        OP,
        "vector_add_v5",
        {"x": x, "y": y},
        out,
        block,
        grid_for=lambda n: cdiv(n // 4 + n % 4, block),  # float4s, then the tail
        align=16,
    )


# --8<-- [end:launchers]


def vector_add(x, y, out=None, version=5, block=256):
    """out = x + y on the GPU with the chosen version (default: the fastest)."""
    return pick(FAMILY, version)(x, y, out=out, block=block)


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    (n,) = size
    return (
        rng.standard_normal(n, dtype=np.float32),
        rng.standard_normal(n, dtype=np.float32),
    )


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "vector_add_v1",
            "one block: a loop over the array in steps of blockDim",
            vector_add_v1,
            blocks=(32, 256, 1024),
        ),
        Version(
            2,
            "vector_add_v2",
            "many blocks, one thread per element, bounds check",
            vector_add_v2,
            blocks=(32, 128, 256, 1024),
        ),
        Version(
            3,
            "vector_add_v3",
            "grid-stride loop: a grid sized to the GPU",
            vector_add_v3,
            blocks=(32, 256, 1024),
        ),
        Version(
            4,
            "vector_add_v4",
            "grid-stride loop over float4 (16-byte accesses)",
            vector_add_v4,
            blocks=(32, 256, 1024),
        ),
        Version(
            5,
            "vector_add_v5",
            "one float4 per thread, one pass of the grid",
            vector_add_v5,
            blocks=(32, 256, 1024),
        ),
    ),
    ref=vector_add_ref,
    make_inputs=make_inputs,
    check_sizes=((1,), (3,), (31,), (257,), (1000,), (4099,), (65537,), (1_000_003,)),
    bench_size=(2**28,),
    bytes_moved=lambda size: 3 * 4 * size[0],  # read x and y, write out
    tolerance=0.0,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
