"""Device-to-device copy: the measured bandwidth ceiling ("hardware peak") of a GPU run.

python -m thousand.kernels.copy
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import cdiv, grid_stride_blocks, launch_1d
from thousand.kernels.family import Family, Version, pick

OP = "copy"


def copy_ref(x: np.ndarray) -> np.ndarray:
    return x.copy()


def copy_v1(x, out=None, block=256):
    return launch_1d(
        OP, "copy_v1", {"x": x}, out, block, grid_for=lambda n: cdiv(n, block)
    )


def copy_v2(x, out=None, block=256):
    return launch_1d(
        OP,
        "copy_v2",
        {"x": x},
        out,
        block,
        grid_for=lambda n: grid_stride_blocks(block, cdiv(n, 4)),
        align=16,
    )


def copy_v3(x, out=None, block=256):
    return launch_1d(
        OP,
        "copy_v3",
        {"x": x},
        out,
        block,
        grid_for=lambda n: cdiv(n // 4 + n % 4, block),  # float4s, then the tail
        align=16,
    )


def copy(x, out=None, version=3, block=256):
    return pick(FAMILY, version)(x, out=out, block=block)


def make_inputs(rng, size):
    return (rng.standard_normal(size[0], dtype=np.float32),)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1, "copy_v1", "one thread per element", copy_v1, blocks=(128, 256, 1024)
        ),
        Version(
            2, "copy_v2", "grid-stride float4 copy", copy_v2, blocks=(128, 256, 1024)
        ),
        Version(
            3,
            "copy_v3",
            "one float4 per thread, one pass of the grid",
            copy_v3,
            blocks=(128, 256, 1024),
        ),
    ),
    ref=copy_ref,
    make_inputs=make_inputs,
    check_sizes=((1,), (5,), (1023,), (65541,), (1_000_003,)),
    bench_size=(2**28,),
    bytes_moved=lambda size: 2 * 4 * size[0],
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
