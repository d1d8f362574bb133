"""Batch norm in training: per-channel statistics of the batch, then normalise (A11).

    Y = batch_norm(X, gamma, beta, mean=mean, invstd=invstd)   # X (..., C)
    running_mean = (1 - m) running_mean + m mean               # the model's update

python -m thousand.kernels.batch_norm
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
from thousand.kernels.batch_norm_inference import (
    EPS,
    batch_norm_inference_v1,
    check_channels,
    check_eps,
)
from thousand.kernels.family import Family, Version, pick
from thousand.kernels.layer_launch import counters, forget_counters, scratch

OP = "batch_norm"
LANES = 32  # channels per block: a warp reads 32 neighbouring floats of a row
TARGET_BLOCKS = 1024  # enough blocks to fill every SM several times over


def batch_norm_stats_ref(X: np.ndarray, eps=EPS) -> tuple[np.ndarray, np.ndarray]:
    """mean and invstd = 1 / sqrt(biased var + eps), per channel (the last axis)."""
    rows = X.reshape(-1, X.shape[-1]).astype(np.float64)
    mean = rows.mean(axis=0)
    var = ((rows - mean) ** 2).mean(axis=0)
    return mean, 1 / np.sqrt(var + np.float32(eps))


def batch_norm_ref(X, gamma, beta, eps=EPS) -> np.ndarray:
    mean, invstd = batch_norm_stats_ref(X, eps)
    return (X.astype(np.float64) - mean) * invstd * gamma + beta


def check_lanes(op: str, block) -> int:
    """`block` threads as 32 channels x rows, rows a power of 2 (a tree)."""
    check_block(op, block, ndim=1)
    rows = block // LANES
    if block % LANES or rows & (rows - 1):
        raise ValueError(
            f"{op}: `block` must be 32 times a power of 2 (32, 64, ..., 1024), "
            f"got {block}"
        )
    return rows


def plan_chunks(M: int, C: int, rows: int) -> tuple[int, int]:
    """(chunks, rows per chunk): about TARGET_BLOCKS blocks in all, each block's
    lanes with at least 16 rows to walk."""
    tiles = cdiv(C, LANES)
    chunks = max(1, min(cdiv(M, 16 * rows), TARGET_BLOCKS // tiles, 65535))
    chunk_rows = cdiv(M, chunks)
    return cdiv(M, chunk_rows), chunk_rows  # no empty chunk


def batch_norm_v1(X, gamma, beta, out=None, block=256, eps=EPS, mean=None, invstd=None):
    """Y; the batch's mean and invstd (C,) into `mean` and `invstd` when given."""
    M, C = check_channels(OP, X, {"gamma": gamma, "beta": beta}, out)
    for name, a in (("mean", mean), ("invstd", invstd)):
        if a is not None:
            check_array(OP, name, a, ndim=1)
            check_shape(OP, name, a, (C,))
    eps = check_eps(OP, eps)
    rows = check_lanes(OP, block)
    if M == 0 and C:
        raise ValueError(f"{OP}: `X` {tuple(X.shape)} has no rows: no batch statistics")
    stage = Staging(OP, X, gamma, beta, names=("X", "gamma", "beta"))
    dX, dgamma, dbeta = stage.inputs()
    dY = stage.output(out, X.shape)
    stage.named["out"] = out  # the statistics may not overlap Y either
    stats = {}  # the caller's mean and invstd, else buffers kept between calls
    for name, a in (("mean", mean), ("invstd", invstd)):
        if a is None:
            stats[name] = scratch(OP, name, (C,))
        else:
            stats[name] = stage.output(a, (C,), name=name)
            stage.named[name] = a  # nor each other
    if dY.size:
        chunks, chunk_rows = plan_chunks(M, C, rows)
        tiles = cdiv(C, LANES)
        var = scratch(OP, "var", (C,))
        partial = scratch(OP, "partial", (3 * chunks * C,))
        count = counters(OP, tiles)
        args = (dX, stats["mean"], stats["invstd"], var, partial, count)
        ints = (np.int32(M), np.int32(C), np.int32(chunk_rows))
        try:
            launch(
                OP,
                "batch_norm_v1",
                (tiles, chunks),
                (LANES, rows),
                *args,
                *ints,
                eps,
                shared=3 * 4 * block,
            )
        except Exception:
            forget_counters(OP)  # a broken launch may leave counts
            raise
        # Y with the batch's statistics: the inference kernel, on the device arrays
        batch_norm_inference_v1(
            dX, dgamma, dbeta, stats["mean"], var, out=dY, block=256, eps=eps
        )
    for name, a in (("mean", mean), ("invstd", invstd)):
        if a is not None and stage.on_host:
            stats[name].get(ary=a)
    return stage.result(dY, out)


def batch_norm(
    X, gamma, beta, eps=EPS, out=None, mean=None, invstd=None, version=1, block=256
):
    run = pick(FAMILY, version)
    return run(X, gamma, beta, out=out, block=block, eps=eps, mean=mean, invstd=invstd)


def make_inputs(rng, size):
    """size: X's shape, channels last. Each channel its own mean (up to +-20) and
    spread (0.5 to 3), so a mix-up between channels shows."""
    C = size[-1]
    shift = rng.uniform(-20, 20, C)
    spread = rng.uniform(0.5, 3, C)
    X = (shift + spread * rng.standard_normal(size)).astype(np.float32)
    gamma = (1 + 0.5 * rng.standard_normal(C)).astype(np.float32)
    beta = rng.standard_normal(C, dtype=np.float32)
    return X, gamma, beta


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "batch_norm_v1",
            "Welford per thread, Chan's merge across rows, chunks and blocks",
            batch_norm_v1,
            blocks=(64, 256),
        ),
    ),
    ref=batch_norm_ref,
    make_inputs=make_inputs,
    # dense (M, C) and NHWC: two rows (PyTorch refuses one in training; the CPU
    # tests take M = 1), one channel, C not a multiple of 32, M enough for several
    # chunks per channel tile
    check_sizes=((2, 1), (7, 3), (2, 5, 7, 33), (3, 9, 11, 64), (4099, 5)),
    bench_size=(32, 56, 56, 64),
    # read X and write Y: the fewest bytes; v1 reads X twice (statistics, then Y)
    bytes_moved=lambda size: 4 * (2 * int(np.prod(size)) + 2 * size[-1]),
    # float32 statistics over thousands of rows, then the inference kernel's bound
    tolerance=1e-5,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
