"""The gradients of batch norm in training: dX, dgamma and dbeta (A11).

    dX = batch_norm_backward(dY, X, gamma, mean, invstd, dgamma=dg, dbeta=db)

python -m thousand.kernels.batch_norm_backward
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_shape, launch
from thousand.kernels.batch_norm import (
    LANES,
    batch_norm_stats_ref,
    check_lanes,
    plan_chunks,
)
from thousand.kernels.batch_norm_inference import check_channels
from thousand.kernels.family import Family, Version, pick
from thousand.kernels.layer_launch import counters, scratch

OP = "batch_norm_backward"


def batch_norm_backward_parts(dY, X, gamma, mean, invstd):
    """(dX, dgamma, dbeta) in float64."""
    C = X.shape[-1]
    rows = X.reshape(-1, C).astype(np.float64)
    g = dY.reshape(-1, C).astype(np.float64)
    M = rows.shape[0]
    xhat = (rows - mean) * invstd.astype(np.float64)
    dbeta = g.sum(axis=0)
    dgamma = (g * xhat).sum(axis=0)
    dX = gamma * invstd.astype(np.float64) / M * (M * g - dbeta - xhat * dgamma)
    return dX.reshape(X.shape), dgamma, dbeta


def batch_norm_backward_ref(dY, X, gamma, mean, invstd) -> np.ndarray:
    return batch_norm_backward_parts(dY, X, gamma, mean, invstd)[0]


def batch_norm_backward_v1(
    dY, X, gamma, mean, invstd, out=None, block=256, dgamma=None, dbeta=None
):
    """dX; dgamma and dbeta (C,) into `dgamma` and `dbeta` when given."""
    vectors = {"gamma": gamma, "mean": mean, "invstd": invstd}
    M, C = check_channels(OP, X, vectors, out)
    check_array(OP, "dY", dY, ndim=X.ndim)
    check_shape(OP, "dY", dY, X.shape)
    for name, a in (("dgamma", dgamma), ("dbeta", dbeta)):
        if a is not None:
            check_array(OP, name, a, ndim=1)
            check_shape(OP, name, a, (C,))
    rows = check_lanes(OP, block)
    names = ("dY", "X", *vectors)
    stage = Staging(OP, dY, X, *vectors.values(), names=names)
    d_in = stage.inputs()
    d_dX = stage.output(out, X.shape)
    stage.named["out"] = out  # the parameter gradients may not overlap dX either
    grads = {}  # the caller's dgamma and dbeta, else buffers kept between calls
    for name, a in (("dgamma", dgamma), ("dbeta", dbeta)):
        if a is None:
            grads[name] = scratch(OP, name, (C,))
        else:
            grads[name] = stage.output(a, (C,), name=name)
            stage.named[name] = a  # nor each other
    if M and C:
        chunks, chunk_rows = plan_chunks(M, C, rows)
        tiles = cdiv(C, LANES)
        partial = scratch(OP, "partial", (2 * chunks * C,))
        count = counters(OP, tiles)
        args = (*d_in, d_dX, grads["dgamma"], grads["dbeta"], partial, count)
        ints = (np.int32(M), np.int32(C), np.int32(chunk_rows))
        shared = 2 * 4 * block
        launch(
            OP,
            "batch_norm_backward_v1",
            (tiles, chunks),
            (LANES, rows),
            *args,
            *ints,
            np.int32(0),
            shared=shared,
        )  # phase 0: the two sums
        grid = (cdiv(M * C, block),)
        launch(
            OP,
            "batch_norm_backward_v1",
            grid,
            (block,),
            *args,
            *ints,
            np.int32(1),
        )  # phase 1: dX
    elif C:  # no rows: the sums are empty
        for g in grads.values():
            g.fill(0)
    for name, a in (("dgamma", dgamma), ("dbeta", dbeta)):
        if a is not None and stage.on_host:
            grads[name].get(ary=a)
    return stage.result(d_dX, out)


def batch_norm_backward(
    dY, X, gamma, mean, invstd, out=None, dgamma=None, dbeta=None, version=1, block=256
):
    run = pick(FAMILY, version)
    return run(
        dY, X, gamma, mean, invstd, out=out, block=block, dgamma=dgamma, dbeta=dbeta
    )


def make_inputs(rng, size):
    """size: X's shape, channels last; mean and invstd X's own (float32), as the
    forward wrote them."""
    from thousand.kernels.batch_norm import make_inputs as forward_inputs

    X, gamma, _ = forward_inputs(rng, size)
    mean, invstd = (a.astype(np.float32) for a in batch_norm_stats_ref(X))
    dY = rng.standard_normal(size, dtype=np.float32)
    return dY, X, gamma, mean, invstd


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "batch_norm_backward_v1",
            "two column sums (chunks merged by the last block), then dX per element",
            batch_norm_backward_v1,
            blocks=(64, 256),
        ),
    ),
    ref=batch_norm_backward_ref,
    make_inputs=make_inputs,
    check_sizes=((2, 1), (7, 3), (2, 5, 7, 33), (3, 9, 11, 64), (4099, 5)),
    bench_size=(32, 56, 56, 64),
    # read dY and X, write dX: the fewest bytes; v1 reads dY and X twice
    bytes_moved=lambda size: 4 * (3 * int(np.prod(size)) + 5 * size[-1]),
    # M dY - dbeta - xhat dgamma cancels: float32 sums of thousands of terms
    tolerance=1e-5,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
