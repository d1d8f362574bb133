"""Layer normalisation over the last axis: each row to mean 0 and variance 1, then
scaled by gamma and shifted by beta (Ba, Kiros and Hinton, 2016).

    y = layer_norm(x, gamma, beta)              # x: (rows, C); gamma, beta: (C,)
    mean, rstd = np.empty(rows, np.float32), np.empty(rows, np.float32)
    y = layer_norm(x, gamma, beta, mean=mean, rstd=rstd)   # what the backward needs

Three ways to get a row's mean and variance: two passes (v1), one pass with the sum
of squares, which cancels (v2), and one pass with Welford's update and the row held
in registers (v3). The family's checks compare y; tests/cpu/test_layer_norm.py
checks mean and rstd of every version too.

python -m thousand.kernels.layer_norm
"""

from __future__ import annotations

import math

import numpy as np

from thousand.cuda import (
    Staging,
    check_aligned,
    check_array,
    check_block,
    check_shape,
    launch,
)
from thousand.kernels.family import Family, Version, pick
from thousand.kernels.layer_launch import scratch

OP = "layer_norm"
EPS = 1e-5  # torch.nn.functional.layer_norm's default


# --8<-- [start:ref]
def layer_norm_stats_ref(x: np.ndarray, eps: float = EPS):
    """Each row's mean and rstd = 1 / sqrt(var + eps), in float64 (var biased:
    divided by C). eps as the kernels get it, a float32."""
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1)
    var = ((x64 - mean[:, None]) ** 2).mean(axis=1)  # two passes: nothing cancels
    return mean, 1.0 / np.sqrt(var + float(np.float32(eps)))


def layer_norm_ref(x, gamma, beta, eps: float = EPS) -> np.ndarray:
    """y in float64, rounded once to float32."""
    mean, rstd = layer_norm_stats_ref(x, eps)
    xhat = (x.astype(np.float64) - mean[:, None]) * rstd[:, None]  # (rows, C)
    return (xhat * gamma.astype(np.float64) + beta).astype(np.float32)


# --8<-- [end:ref]


def _eps(eps) -> np.float32:
    ok = isinstance(eps, int | float | np.integer | np.floating) and not isinstance(
        eps, bool
    )
    if not ok or not math.isfinite(eps) or eps < 0:
        raise ValueError(
            f"{OP}: `eps` must be a finite number >= 0 such as 1e-5, got {eps!r}"
        )
    return np.float32(eps)


def _run(name, x, gamma, beta, out, block, eps, mean, rstd, vectors=False, most=1024):
    """Check everything, then stage and launch `name` with one block per row."""
    check_array(OP, "x", x, ndim=2)  # (rows, C)
    rows, C = x.shape
    for arg, a in (("gamma", gamma), ("beta", beta)):
        check_array(OP, arg, a, ndim=1)  # (C,)
        check_shape(OP, arg, a, (C,))
    outputs = (
        ("out", out, (rows, C)),
        ("mean", mean, (rows,)),
        ("rstd", rstd, (rows,)),
    )
    for arg, a, shape in outputs:
        if a is not None:
            check_array(OP, arg, a, ndim=len(shape))
            check_shape(OP, arg, a, shape)
    (block,) = check_block(OP, block, ndim=1)
    if block % 32:
        raise ValueError(f"{OP}: {name} needs whole warps, got a block of {block}")
    if block > most:  # registers: each thread holds part of its row
        raise ValueError(
            f"{OP}: {name} keeps 16 floats of the row per thread in registers and "
            f"launches at most {most} threads a block, got {block}"
        )
    eps = _eps(eps)
    if rows and not C:
        raise ValueError(f"{OP}: `x` has rows of no values (C = 0): no mean to take")
    if vectors:  # 16-byte loads and stores: rows start on 16 bytes when C % 4 == 0
        for arg, a in (("x", x), ("gamma", gamma), ("beta", beta), ("out", out)):
            if a is not None:
                check_aligned(OP, arg, a, 16)
    stage = Staging(OP, x, gamma, beta, names=("x", "gamma", "beta"))
    d_x, d_gamma, d_beta = stage.inputs()
    d_y = stage.output(out, (rows, C))
    stage.named["out"] = out  # mean and rstd may overlap neither y nor each other
    d_stats = []
    for arg, a in (("mean", mean), ("rstd", rstd)):
        if a is None:  # not wanted: written into a buffer kept between calls
            d = scratch(OP, arg, (rows,))
        else:
            d = stage.output(a, (rows,), name=arg)
        stage.named[arg] = a
        d_stats.append(d)
    if rows:
        args = (d_x, d_gamma, d_beta, d_y, *d_stats, np.int32(rows), np.int32(C), eps)
        launch(OP, name, (rows,), (block,), *args)  # one block per row
    if stage.on_host:
        for d, a in zip(d_stats, (mean, rstd), strict=True):
            if a is not None:
                d.get(ary=a)
    return stage.result(d_y, out)


# --8<-- [start:launchers]
def layer_norm_v1(x, gamma, beta, out=None, block=256, eps=EPS, mean=None, rstd=None):
    """Two passes for mean and variance, a third for y."""
    return _run("layer_norm_v1", x, gamma, beta, out, block, eps, mean, rstd)


def layer_norm_v2(x, gamma, beta, out=None, block=256, eps=EPS, mean=None, rstd=None):
    """One pass: the sum and the sum of squares (cancels when |mean| >> std)."""
    return _run("layer_norm_v2", x, gamma, beta, out, block, eps, mean, rstd)


def layer_norm_v3(x, gamma, beta, out=None, block=256, eps=EPS, mean=None, rstd=None):
    """One pass, Welford and Chan; float4 loads, the row kept in registers."""
    return _run(
        "layer_norm_v3", x, gamma, beta, out, block, eps, mean, rstd, True, most=512
    )


def layer_norm_v4(x, gamma, beta, out=None, block=256, eps=EPS, mean=None, rstd=None):
    """v1's two exact passes, over the registers v3 fills; float4 loads."""
    return _run(
        "layer_norm_v4", x, gamma, beta, out, block, eps, mean, rstd, True, most=512
    )


# --8<-- [end:launchers]


# --8<-- [start:front-door]
def layer_norm(
    x, gamma, beta, eps=EPS, out=None, version=4, block=256, mean=None, rstd=None
):
    """Normalise each row of the (rows, C) float32 array `x`, then scale by `gamma`
    and shift by `beta` (both (C,)). Returns y (in `out` when given); writes each
    row's mean and 1 / sqrt(var + eps) into `mean` and `rstd` when given ((rows,)
    arrays of the same kind as x), which layer_norm_backward takes."""
    run = pick(FAMILY, version)
    return run(x, gamma, beta, out=out, block=block, eps=eps, mean=mean, rstd=rstd)


# --8<-- [end:front-door]


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    rows, C = size
    # Rows with their own offset and scale (means in [-2, 2], std in [0.5, 2]): the
    # mean matters, and v2's cancellation stays small (|mean| / std <= 4).
    offset = rng.uniform(-2, 2, (rows, 1))
    scale = rng.uniform(0.5, 2, (rows, 1))
    x = (offset + scale * rng.standard_normal((rows, C))).astype(np.float32)
    gamma = (1 + 0.5 * rng.standard_normal(C)).astype(np.float32)
    beta = (0.5 * rng.standard_normal(C)).astype(np.float32)
    return x, gamma, beta


BLOCKS = (32, 256, 1024)  # one warp, the default, the most a block can have

FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "layer_norm_v1",
            "one block per row, two passes: the mean, then squared deviations",
            layer_norm_v1,
            blocks=BLOCKS,
        ),
        Version(
            2,
            "layer_norm_v2",
            "one pass with the sum of squares: E[x^2] - E[x]^2 cancels",
            layer_norm_v2,
            blocks=BLOCKS,
            # |mean| / std up to 4 in make_inputs: E[x^2] is up to 17 times the
            # variance, and its rounding lands on the variance magnified so: 1.2e-6
            # measured on the CPU backend (v1: 2.6e-7). Rows further from 0 lose
            # more (tests/cpu/test_layer_norm.py shows it): the bound is for these.
            tolerance=5e-6,
        ),
        Version(
            3,
            "layer_norm_v3",
            "one pass, Welford + Chan; float4 loads, the row kept in registers",
            layer_norm_v3,
            blocks=(32, 256, 512),  # 1024 threads would need more registers than a
            # block has (__launch_bounds__(512) in the .cu)
        ),
        Version(
            4,
            "layer_norm_v4",
            "two exact passes over the row held in registers: no per-element divide",
            layer_norm_v4,
            blocks=(32, 256, 512),
        ),
    ),
    ref=layer_norm_ref,
    make_inputs=make_inputs,
    # (rows, C): one value, a row shorter than a warp, odd widths (scalar loads in
    # v3), a row that fills v3's registers exactly at 256 threads (4,096) and ones
    # just past it, past them at 1,024 threads (20,000), and many rows
    check_sizes=(
        (1, 1),
        (1, 7),
        (5, 33),
        (3, 1000),
        (17, 1025),
        (4, 4096),
        (2, 4097),
        (3, 4100),
        (2, 20000),
        (1000, 100),
        (4099, 31),
        (257, 8192),
    ),
    bench_size=(32768, 4096),
    # read x, write y; gamma and beta once; mean and rstd written
    bytes_moved=lambda size: 4 * (2 * size[0] * size[1] + 2 * size[1] + 2 * size[0]),
    # |y| is a few units; the float32 mean, variance and rsqrtf each round by an ulp
    # or two (rsqrtf is approximate on a GPU, 2 ulp) and the sums add up to 20,000
    # terms in another order than float64: at most 2.8e-7 measured on the CPU
    # backend (v1 and v3, every check size and block, mean and rstd alike); 1e-6
    # leaves room for the GPU's rsqrtf and fused multiply-adds.
    tolerance=1e-6,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
