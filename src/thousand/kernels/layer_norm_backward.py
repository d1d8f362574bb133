"""The backward pass of layer_norm: dx, dgamma and dbeta from dy.

    mean, rstd = np.empty(rows, np.float32), np.empty(rows, np.float32)
    y = layer_norm(x, gamma, beta, mean=mean, rstd=rstd)
    dx, dgamma, dbeta = layer_norm_backward(x, dy, gamma, mean, rstd)

Why one output of (rows + 2, C). The three gradients come from one launch and the
checks and benchmarks compare one array per family, so the launchers write them
into one buffer: rows 0 .. rows-1 hold dx, row `rows` dgamma, row `rows + 1` dbeta.
dgamma and dbeta are then 2C neighbouring floats, which is exactly what the second
stage (col_sum_v1 over the (blocks, 2C) partials) writes. `layer_norm_backward`
returns the three as views of it.

python -m thousand.kernels.layer_norm_backward
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, check_array, check_block, check_shape, fill, launch
from thousand.kernels.col_sum import col_sum_v1
from thousand.kernels.family import Family, Version, pick
from thousand.kernels.layer_launch import scratch
from thousand.kernels.layer_norm import layer_norm_stats_ref
from thousand.kernels.layer_norm import make_inputs as forward_inputs

OP = "layer_norm_backward"
PARTIAL_BLOCKS = 512  # the most blocks, so rows of partials for the second stage


# --8<-- [start:ref]
def layer_norm_backward_parts(x, dy, gamma, mean, rstd):
    """dx, dgamma, dbeta in float64, from the mean and rstd given (the forward's)."""
    x, dy, gamma = (a.astype(np.float64) for a in (x, dy, gamma))
    mean, rstd = (np.asarray(a, np.float64)[:, None] for a in (mean, rstd))
    xhat = (x - mean) * rstd  # (rows, C)
    g = dy * gamma  # dL/dxhat
    dx = rstd * (
        g
        - g.mean(axis=1, keepdims=True)
        - xhat * (g * xhat).mean(axis=1, keepdims=True)
    )
    return dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)


def layer_norm_backward_ref(x, dy, gamma, mean, rstd) -> np.ndarray:
    """The three gradients packed into (rows + 2, C), rounded once to float32."""
    dx, dgamma, dbeta = layer_norm_backward_parts(x, dy, gamma, mean, rstd)
    return np.concatenate([dx, dgamma[None], dbeta[None]]).astype(np.float32)


# --8<-- [end:ref]


# --8<-- [start:launchers]
def layer_norm_backward_v1(x, dy, gamma, mean, rstd, out=None, block=256):
    """Returns the (rows + 2, C) array of dx, dgamma and dbeta (see the module)."""
    check_array(OP, "x", x, ndim=2)  # (rows, C)
    rows, C = x.shape
    check_array(OP, "dy", dy, ndim=2)
    check_shape(OP, "dy", dy, (rows, C))
    check_array(OP, "gamma", gamma, ndim=1)
    check_shape(OP, "gamma", gamma, (C,))
    for arg, a in (("mean", mean), ("rstd", rstd)):
        check_array(OP, arg, a, ndim=1)
        check_shape(OP, arg, a, (rows,))
    if out is not None:
        check_array(OP, "out", out, ndim=2)
        check_shape(OP, "out", out, (rows + 2, C))
    (block,) = check_block(OP, block, ndim=1)
    if block % 32:
        raise ValueError(f"{OP}: needs whole warps, got a block of {block}")
    blocks = min(rows, PARTIAL_BLOCKS)
    names = ("x", "dy", "gamma", "mean", "rstd")
    stage = Staging(OP, x, dy, gamma, mean, rstd, names=names)
    d_in = stage.inputs()
    d_out = stage.output(out, (rows + 2, C))
    if rows and C:
        partial = scratch(OP, "partial", (blocks, 2 * C))  # dgamma, dbeta per block
        args = (*d_in, d_out, partial, np.int32(rows), np.int32(C))
        launch(OP, "layer_norm_backward_v1", (blocks,), (block,), *args)
        flat = d_out.reshape((rows + 2) * C)
        col_sum_v1(partial, out=flat[rows * C :])  # stage two: dgamma, then dbeta
    elif C:  # no rows: empty sums
        fill(d_out, 0.0)
    return stage.result(d_out, out)


# --8<-- [end:launchers]


# --8<-- [start:front-door]
def layer_norm_backward(x, dy, gamma, mean, rstd, out=None, version=1, block=256):
    """dx (rows, C), dgamma (C,) and dbeta (C,) for the upstream gradient `dy` of
    layer_norm(x, gamma, beta), given the `mean` and `rstd` it wrote. Views of one
    (rows + 2, C) array (`out` when given)."""
    run = pick(FAMILY, version)
    grads = run(x, dy, gamma, mean, rstd, out=out, block=block)
    rows, C = x.shape
    flat = grads.reshape((rows + 2) * C)
    return (
        flat[: rows * C].reshape(rows, C),
        flat[rows * C : (rows + 1) * C],
        flat[(rows + 1) * C :],
    )


# --8<-- [end:front-door]


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    x, gamma, _ = forward_inputs(rng, size)
    dy = rng.standard_normal(size, dtype=np.float32)
    mean, rstd = (a.astype(np.float32) for a in layer_norm_stats_ref(x))
    return x, dy, gamma, mean, rstd


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "layer_norm_backward_v1",
            "dx per row; dgamma, dbeta as per-block partials, then column sums",
            layer_norm_backward_v1,
            blocks=(32, 256, 1024),
        ),
    ),
    ref=layer_norm_backward_ref,
    make_inputs=make_inputs,
    # (rows, C): one value, odd widths, and more rows than PARTIAL_BLOCKS, so that
    # blocks take several rows each (1,000 and 4,099 rows)
    check_sizes=(
        (1, 1),
        (1, 7),
        (5, 33),
        (3, 1000),
        (17, 1025),
        (4, 4096),
        (2, 4097),
        (1000, 100),
        (4099, 31),
        (257, 8192),
        (2048, 1024),
    ),
    bench_size=(32768, 4096),
    # read x and dy, write dx; gamma read, dgamma and dbeta written; mean and rstd
    bytes_moved=lambda size: 4 * (3 * size[0] * size[1] + 3 * size[1] + 2 * size[0]),
    # relative to the largest gradient, which is dgamma's or dbeta's: sums over up to
    # 4,099 rows of O(1) terms, in float32 along a block's rows and then down 512
    # partials: up to 9.6e-7 of the largest measured on the CPU backend (dx alone,
    # against its own scale: 1.4e-7; tests/cpu/test_layer_norm.py checks it so).
    # A row of one column has variance 0, so rstd = 1/sqrt(eps) ~ 316 multiplies the
    # rounding of g - mean(g): 5.0e-6 on the H200, whose fused multiply-adds round
    # it differently from the CPU.
    tolerance=1e-5,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
