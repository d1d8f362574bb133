"""Global average pooling, NHWC: the mean of each channel over the image (A11).

python -m thousand.kernels.global_avg_pool
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick

OP = "global_avg_pool"
LANES = 32  # channels per block: a warp reads 32 neighbouring floats


def global_avg_pool_ref(X: np.ndarray) -> np.ndarray:
    return X.astype(np.float64).mean(axis=(1, 2))


def global_avg_pool_v1(X, out=None, block=256):
    """X (N, H, W, C) -> (N, C). `block` threads: 32 channels x block / 32 rows."""
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
    if N > 65535:  # grid.y holds the image
        raise ValueError(f"{OP}: at most 65,535 images per call, got N = {N}")
    stage = Staging(OP, X, names=("X",))
    (dX,) = stage.inputs()
    dY = stage.output(out, (N, C))
    if dY.size:
        grid = ((C + LANES - 1) // LANES, N)
        ints = [np.int32(v) for v in (N, H * W, C)]
        threads = (LANES, rows)
        launch(OP, "global_avg_pool_v1", grid, threads, dX, dY, *ints, shared=4 * block)
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
