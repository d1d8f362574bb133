"""Global average pooling, NHWC: the mean of each channel over the image (A11).

python -m thousand.kernels.global_avg_pool
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import (
    Staging,
    cdiv,
    check_array,
    check_block,
    check_shape,
    launch,
)
from thousand.kernels.batch_norm import TARGET_BLOCKS
from thousand.kernels.family import Family, Version, pick
from thousand.kernels.layer_launch import counters, forget_counters, scratch

OP = "global_avg_pool"
LANES = 32  # channels per block: a warp reads 32 neighbouring floats


def global_avg_pool_ref(X: np.ndarray) -> np.ndarray:
    return X.astype(np.float64).mean(axis=(1, 2))


def _start(X, out, block):
    """The checks both versions share; (stage, X and Y on the device, rows)."""
    check_array(OP, "X", X, ndim=4)  # (N, H, W, C)
    N, H, W, C = X.shape
    if out is not None:
        check_array(OP, "out", out, ndim=2)
        check_shape(OP, "out", out, (N, C))
    check_block(OP, block, ndim=1)
    rows = block // LANES
    if block % LANES or rows & (rows - 1):  # the tree halves the rows
        raise ValueError(
            f"{OP}: `block` must be 32 times a power of 2 (32, 64, ..., 1024), "
            f"got {block}"
        )
    if H * W == 0 and N * C:
        raise ValueError(f"{OP}: `X` is {H} x {W}: the mean of no pixels is undefined")
    if N > 65535:  # grid.y (v1) or grid.z (v2) holds the image
        raise ValueError(f"{OP}: at most 65,535 images per call, got N = {N}")
    stage = Staging(OP, X, names=("X",))
    (dX,) = stage.inputs()
    return stage, dX, stage.output(out, (N, C)), rows


def global_avg_pool_v1(X, out=None, block=256):
    """X (N, H, W, C) -> (N, C). `block` threads: 32 channels x block / 32 rows."""
    stage, dX, dY, rows = _start(X, out, block)
    N, H, W, C = X.shape
    if dY.size:
        grid = ((C + LANES - 1) // LANES, N)
        ints = [np.int32(v) for v in (N, H * W, C)]
        threads = (LANES, rows)
        launch(OP, "global_avg_pool_v1", grid, threads, dX, dY, *ints, shared=4 * block)
    return stage.result(dY, out)


def plan_chunks(HW: int, tiles: int, rows: int) -> tuple[int, int]:
    """(chunks, pixels per chunk) for v2: about TARGET_BLOCKS blocks over the
    `tiles` (image, channel tile) pairs, each block's lanes with at least 16
    pixels to walk."""
    chunks = max(1, min(cdiv(HW, 16 * rows), TARGET_BLOCKS // tiles, 65535))
    chunk_rows = cdiv(HW, chunks)
    return cdiv(HW, chunk_rows), chunk_rows  # no empty chunk


def global_avg_pool_v2(X, out=None, block=256):
    """v1 with each image's pixels split over several blocks (chunks), their sums
    added in order by the last block of each (image, channel tile)."""
    stage, dX, dY, rows = _start(X, out, block)
    N, H, W, C = X.shape
    if dY.size:
        tiles = cdiv(C, LANES)
        chunks, chunk_rows = plan_chunks(H * W, tiles * N, rows)
        partial = scratch(OP, "partial", (N * chunks * C,))
        count = counters(OP, tiles * N)
        ints = [np.int32(v) for v in (H * W, C, chunk_rows)]
        try:
            launch(
                OP,
                "global_avg_pool_v2",
                (tiles, chunks, N),
                (LANES, rows),
                dX,
                dY,
                partial,
                count,
                *ints,
                shared=4 * block,
            )
        except Exception:
            forget_counters(OP)  # a broken launch may leave counts
            raise
    return stage.result(dY, out)


def global_avg_pool(X, out=None, version=1, block=256):
    return pick(FAMILY, version)(X, out=out, block=block)


def make_inputs(rng, size):
    return (rng.standard_normal(size, dtype=np.float32),)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "global_avg_pool_v1",
            "one block per image and 32 channels: a column sum down the pixels",
            global_avg_pool_v1,
            blocks=(64, 256),
        ),
        Version(
            2,
            "global_avg_pool_v2",
            "the pixels split over blocks too, the chunks' sums added in order",
            global_avg_pool_v2,
            blocks=(64, 256),
        ),
    ),
    ref=global_avg_pool_ref,
    make_inputs=make_inputs,
    # (N, H, W, C): one pixel, one channel, C not a multiple of 32, odd sides
    check_sizes=((1, 1, 1, 1), (2, 3, 5, 7), (3, 7, 7, 33), (2, 13, 11, 64)),
    bench_size=(32, 56, 56, 64),
    bytes_moved=lambda s: 4 * (s[0] * s[1] * s[2] * s[3] + s[0] * s[3]),
    # float32 sums of up to thousands of terms, in another order than NumPy's
    tolerance=1e-5,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
