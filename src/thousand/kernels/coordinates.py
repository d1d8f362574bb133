"""Thread coordinates: which block and thread of a launch writes each element.

A teaching family: it computes nothing but the launch itself. `a` is the
(depth, height, width) float32 array the launch covers (only its shape is used);
out is int32 of shape (6, depth, height, width), the planes blockIdx.x, .y, .z,
threadIdx.x, .y, .z. What is right depends on the version and the block shape, so
each version's check uses its own reference (Version.ref), worked out backwards
from the block shape with division and remainder, where the kernels work forwards.

python -m thousand.kernels.coordinates
"""

from __future__ import annotations

import functools

import numpy as np

from thousand.cuda import (
    Staging,
    cdiv,
    check_array,
    check_block,
    check_shape,
    device_info,
    launch,
)
from thousand.cuda.arrays import INT32_MAX
from thousand.kernels.family import Family, Version, pick

OP = "coordinates"
PLANES = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y",
          "threadIdx.z")  # fmt: skip
BLOCKS = {1: (256,), 2: (32, 8), 3: (32, 4, 2)}  # each version's default block


# --8<-- [start:ref]
def coordinates_ref(a: np.ndarray, version: int = 3, block=None) -> np.ndarray:
    """(6, d, h, w) int32: the block and thread that `version`, launched with
    blocks of `block`, assigns to each element of `a`."""
    block = _block(version, BLOCKS[version] if block is None else block)
    d, h, w = a.shape
    z, y, x = np.indices(a.shape)  # each (d, h, w): an element's own coordinates
    zero = np.zeros_like(x)
    along = {  # the position each version's launch covers along its x, y, z
        1: ((z * h + y) * w + x, zero, zero),  # the flat, row-major index
        2: (x, z * h + y, zero),  # a (d * h, w) matrix
        3: (x, y, z),
    }[version]
    size = block + (1,) * (3 - len(block))
    blocks = [p // s for p, s in zip(along, size, strict=True)]
    threads = [p % s for p, s in zip(along, size, strict=True)]
    return np.stack(blocks + threads).astype(np.int32)


# --8<-- [end:ref]


def _block(version: int, block) -> tuple[int, ...]:
    block = tuple(block) if isinstance(block, tuple | list) else (block,)
    if len(block) != version:
        want = {1: "(bx,) or bx", 2: "(bx, by)", 3: "(bx, by, bz)"}[version]
        raise ValueError(
            f"{OP}: coordinates_v{version} takes a {version}-D block {want}, "
            f"got {block}"
        )
    return check_block(OP, block)  # ints (256.7 is not), positive, at most 1024


# --8<-- [start:limits]
def check_launch(name: str, grid: tuple, block: tuple) -> None:
    """Refuse a grid or block the device cannot launch, with the limit it breaks,
    read from the device (CUDA's limits on the CPU backend)."""
    info = device_info()
    for what, dims, limits in (
        ("block", block, info["max_block_dim"]),
        ("grid", grid, info["max_grid_dim"]),
    ):
        for axis, n, most in zip("xyz", dims, limits, strict=False):
            if n > most:
                raise ValueError(
                    f"{OP}: {name} needs a {what} of {n:,} along {axis}; "
                    f"this device allows at most {most:,}"
                )


# --8<-- [end:limits]


def _launch(version: int, a, out, block):
    check_array(OP, "a", a, ndim=3)  # (depth, height, width): only its shape is read
    d, h, w = a.shape
    n = d * h * w
    # --8<-- [start:int-guard]
    if 6 * n > INT32_MAX:  # the kernels index the six planes with int
        raise ValueError(
            f"{OP}: `a` has {n:,} elements; the six planes of `out` ({6 * n:,} ints) "
            "would overflow the kernels' int offsets"
        )
    # --8<-- [end:int-guard]
    if out is not None:
        check_array(OP, "out", out, ndim=4, dtype=np.int32)
        check_shape(OP, "out", out, (6, d, h, w))
    block = _block(version, block)
    check_block(OP, block)
    name = f"coordinates_v{version}"
    # --8<-- [start:grids]
    if version == 1:
        grid = (cdiv(n, block[0]),)  # ceil(n / bx) blocks: the last may run past n
        args = (np.int32(n),)
    elif version == 2:
        grid = (cdiv(w, block[0]), cdiv(d * h, block[1]))
        args = (np.int32(d * h), np.int32(w))
    else:
        grid = (cdiv(w, block[0]), cdiv(h, block[1]), cdiv(d, block[2]))
        args = (np.int32(d), np.int32(h), np.int32(w))
    # --8<-- [end:grids]
    check_launch(name, grid, block)
    stage = Staging(OP, a)  # `a` itself never goes to the device
    d_out = stage.output(out, (6, d, h, w), np.int32)
    if n:
        launch(OP, name, grid, block, d_out, *args)
    return stage.result(d_out, out)


def coordinates_v1(a, out=None, block=BLOCKS[1]):
    return _launch(1, a, out, block)


def coordinates_v2(a, out=None, block=BLOCKS[2]):
    return _launch(2, a, out, block)


def coordinates_v3(a, out=None, block=BLOCKS[3]):
    return _launch(3, a, out, block)


def coordinates(a, out=None, version=3, block=None):
    return pick(FAMILY, version)(a, out=out, block=block or BLOCKS[version])


def make_inputs(rng, size):
    return (np.zeros(size, dtype=np.float32),)  # the kernels read only its shape


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "coordinates_v1",
            "1-D grid of 1-D blocks over the flattened array",
            coordinates_v1,
            blocks=((256,), (96,), (1024,)),
            default_block=BLOCKS[1],
            ref=functools.partial(coordinates_ref, version=1),
        ),
        Version(
            2,
            "coordinates_v2",
            "2-D grid of 2-D blocks over (depth * height) rows",
            coordinates_v2,
            blocks=((32, 8), (16, 16), (5, 3)),
            default_block=BLOCKS[2],
            ref=functools.partial(coordinates_ref, version=2),
        ),
        Version(
            3,
            "coordinates_v3",
            "3-D grid of 3-D blocks (dim3)",
            coordinates_v3,
            blocks=((32, 4, 2), (8, 8, 4), (4, 2, 3)),
            default_block=BLOCKS[3],
            ref=functools.partial(coordinates_ref, version=3),
        ),
    ),
    ref=coordinates_ref,  # v3 with its default block; the checks use Version.ref
    make_inputs=make_inputs,
    check_sizes=(
        (1, 1, 1),
        (1, 1, 7),
        (3, 5, 7),
        (2, 31, 33),
        (5, 17, 101),
        (7, 64, 129),
        (7, 257, 601),
    ),
    bench_size=(64, 512, 1024),
    bytes_moved=lambda size: 6 * 4 * size[0] * size[1] * size[2],  # written; none read
    out_dtype=np.int32,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
