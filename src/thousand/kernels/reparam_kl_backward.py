"""The latent layer of a variational autoencoder (A9), backward: dL/dmu and
dL/dlogvar from dL/dz and the weight w of the KL term, with eps drawn again from
the forward's seed and offset (nothing but mu and logvar is kept).

    grads = reparam_kl_backward(dz, mu, logvar, w, seed, offset)   # (2, M, N)
    dmu, dlogvar = grads[0], grads[1]

python -m thousand.kernels.reparam_kl_backward
"""

from __future__ import annotations

import math

import numpy as np

from thousand.cuda import Staging, cdiv, launch
from thousand.kernels.family import Family, Version, pick
from thousand.kernels.reparam_kl import check_latent, normal_ref, seed_words

OP = "reparam_kl_backward"


# --8<-- [start:ref]
def reparam_kl_backward_ref(dz, mu, logvar, w, seed: int, offset: int = 0):
    """[dL/dmu, dL/dlogvar] as a (2, M, N) float64 array; w as the float32 the
    kernel gets."""
    g, m, lv = (a.astype(np.float64) for a in (dz, mu, logvar))
    w = np.float64(np.float32(w))
    eps = normal_ref(mu.size, seed, offset).reshape(mu.shape)
    sigma = np.exp(lv / 2)
    return np.stack([g + w * m, (g * eps * sigma + w * (sigma * sigma - 1)) / 2])


# --8<-- [end:ref]


def check_weight(w) -> float:
    if isinstance(w, bool) or not isinstance(w, int | float | np.integer | np.floating):
        raise ValueError(
            f"{OP}: `w` (the KL term's weight) must be a number, got {w!r}"
        )
    if not (math.isfinite(w) and w >= 0):
        raise ValueError(f"{OP}: `w` (the KL term's weight) must be >= 0, got {w!r}")
    return float(w)


# --8<-- [start:launchers]
def reparam_kl_backward_v1(dz, mu, logvar, w, seed, offset=0, out=None, block=256):
    """dz, mu, logvar (M, N) float32; returns (2, M, N): dL/dmu, dL/dlogvar."""
    shape = getattr(dz, "shape", None)
    named = {"dz": dz, "mu": mu, "logvar": logvar}
    seed, offset = check_latent(OP, named, shape, out, seed, offset, block)
    w = check_weight(w)
    stage = Staging(OP, dz, mu, logvar, names=("dz", "mu", "logvar"))
    d_dz, d_mu, d_lv = stage.inputs()
    d_out = stage.output(out, (2, *shape))
    n = int(np.prod(shape))
    if n:
        words = seed_words(seed, offset)
        args = (d_dz, d_mu, d_lv, d_out, np.int32(n), np.float32(w), *words)
        launch(OP, "reparam_kl_backward_v1", (cdiv(n, block),), (block,), *args)
    return stage.result(d_out, out)


# --8<-- [end:launchers]


def reparam_kl_backward(
    dz, mu, logvar, w, seed, offset=0, out=None, version=1, block=256
):
    run = pick(FAMILY, version)
    return run(dz, mu, logvar, w, seed, offset, out=out, block=block)


def make_inputs(rng, size):
    """size (M, N, offset): dz, mu ~ N(0, 1), logvar in [-4, 2], w = 1 / M."""
    M, N, offset = size
    dz = rng.standard_normal((M, N), dtype=np.float32)
    mu = rng.standard_normal((M, N), dtype=np.float32)
    logvar = rng.uniform(-4, 2, (M, N)).astype(np.float32)
    seed = int(rng.integers(0, 2**64, dtype=np.uint64))
    return dz, mu, logvar, 1.0 / M, seed, offset


def numpy_baseline(dz, mu, logvar, w, seed, offset):
    """NumPy on the CPU: the same Philox numbers (normal_ref), then both gradients."""
    o = np.empty((2, *mu.shape), np.float32)
    w32 = np.float32(w)

    def run():
        eps = normal_ref(mu.size, seed, offset).reshape(mu.shape)
        sigma = np.exp(0.5 * logvar)
        o[0] = dz + w32 * mu
        o[1] = 0.5 * (dz * eps * sigma + w32 * (sigma * sigma - 1))
        return o

    return run


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "reparam_kl_backward_v1",
            "one thread per element: eps drawn again, both gradients",
            reparam_kl_backward_v1,
            blocks=(64, 256),
        ),
    ),
    ref=reparam_kl_backward_ref,
    make_inputs=make_inputs,
    check_sizes=((1, 1, 0), (7, 3, 5), (64, 2, 0), (129, 20, 2**32 - 3), (997, 33, 1)),
    bench_size=(65536, 64, 0),
    bytes_moved=lambda size: 5 * 4 * size[0] * size[1],  # read dz, mu, logvar; write 2
    tolerance=1e-5,  # as the forward: float32 logf, cosf, expf of eps and sigma
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
