"""Batch norm at inference: each channel normalised by running statistics (A11).

    Y = batch_norm_inference(X, gamma, beta, running_mean, running_var)

python -m thousand.kernels.batch_norm_inference
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick

OP = "batch_norm_inference"
EPS = 1e-5  # PyTorch's default


def check_channels(op: str, X, vectors: dict, out) -> tuple[int, int]:
    """X of 2 or more axes, channels last; each vector C floats; out X's shape.
    Returns (M, C): M rows (every axis but the last) of C channels."""
    check_array(op, "X", X, ndim=max(getattr(X, "ndim", 2), 2))
    C = X.shape[-1]
    for name, v in vectors.items():
        check_array(op, name, v, ndim=1)
        check_shape(op, name, v, (C,))
    if out is not None:
        check_array(op, "out", out, ndim=X.ndim)
        check_shape(op, "out", out, X.shape)
    return int(np.prod(X.shape[:-1])), C


def check_eps(op: str, eps) -> np.float32:
    if isinstance(eps, bool) or not isinstance(eps, int | float | np.floating):
        raise ValueError(f"{op}: `eps` must be a positive number, got {eps!r}")
    if not eps > 0:
        raise ValueError(
            f"{op}: `eps` must be > 0 (it keeps 1 / sqrt finite), got {eps}"
        )
    return np.float32(eps)


def batch_norm_inference_ref(X, gamma, beta, running_mean, running_var, eps=EPS):
    invstd = 1 / np.sqrt(running_var.astype(np.float64) + np.float32(eps))
    return (X.astype(np.float64) - running_mean) * invstd * gamma + beta


def batch_norm_inference_v1(
    X, gamma, beta, running_mean, running_var, out=None, block=256, eps=EPS
):
    vectors = {
        "gamma": gamma,
        "beta": beta,
        "running_mean": running_mean,
        "running_var": running_var,
    }
    M, C = check_channels(OP, X, vectors, out)
    eps = check_eps(OP, eps)
    check_block(OP, block, ndim=1)
    stage = Staging(OP, X, *vectors.values(), names=("X", *vectors))
    d_in = stage.inputs()
    dY = stage.output(out, X.shape)
    if dY.size:
        grid = (cdiv(dY.size, block),)
        ints = (np.int32(M), np.int32(C))
        launch(OP, "batch_norm_inference_v1", grid, (block,), *d_in, dY, *ints, eps)
    return stage.result(dY, out)


def batch_norm_inference(
    X, gamma, beta, running_mean, running_var, eps=EPS, out=None, version=1, block=256
):
    run = pick(FAMILY, version)
    return run(X, gamma, beta, running_mean, running_var, out=out, block=block, eps=eps)


def make_inputs(rng, size):
    """size: X's shape, channels last. Running statistics near the batch's."""
    C = size[-1]
    X = (3 + 2 * rng.standard_normal(size)).astype(np.float32)
    gamma = (1 + 0.5 * rng.standard_normal(C)).astype(np.float32)
    beta = rng.standard_normal(C, dtype=np.float32)
    mean = (3 + 0.1 * rng.standard_normal(C)).astype(np.float32)
    var = (4 * rng.uniform(0.5, 1.5, C)).astype(np.float32)
    return X, gamma, beta, mean, var


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "batch_norm_inference_v1",
            "one thread per element: a per-channel scale and shift",
            batch_norm_inference_v1,
            blocks=(64, 256),
        ),
    ),
    ref=batch_norm_inference_ref,
    make_inputs=make_inputs,
    # dense (M, C) and NHWC: one row, one channel, C not a multiple of 32
    check_sizes=((1, 1), (7, 3), (2, 5, 7, 33), (3, 9, 11, 64)),
    bench_size=(32, 56, 56, 64),
    # read X, write Y; the 4 C-vectors are a rounding error
    bytes_moved=lambda size: 4 * (2 * int(np.prod(size)) + 4 * size[-1]),
    tolerance=2e-6,  # a float32 rsqrtf (2 ulp on the GPU) and three operations
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
