"""The latent layer of a variational autoencoder (A9), forward: the
reparameterisation z = mu + exp(logvar / 2) * eps with eps drawn on the GPU from
Philox-4x32-10, and each element's share of the analytic KL(q(z | x) || N(0, I)).

    out = reparam_kl(mu, logvar, seed, offset=step * mu.size)   # (2, M, N)
    z, kl = out[0], out[1]            # kl.sum(axis=1): each example's KL

python -m thousand.kernels.reparam_kl
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.dropout import U32, check_uint64, philox4x32_10
from thousand.kernels.family import Family, Version, pick

OP = "reparam_kl"
TWO_24 = 2.0**24


# --8<-- [start:ref]
def normal_ref(n: int, seed: int, offset: int = 0) -> np.ndarray:
    """eps for elements offset .. offset + n - 1, as philox_normal draws them:
    Philox words 0 and 1 of counter (e, 1), Box-Muller in float64."""
    e = np.uint64(offset) + np.arange(n, dtype=np.uint64)
    one, zero = np.ones(n, np.uint64), np.zeros(n, np.uint64)
    key = (np.uint64(seed) & U32, np.uint64(seed) >> np.uint64(32))
    w0, w1, _, _ = philox4x32_10((e & U32, e >> np.uint64(32), one, zero), key)
    u1 = ((w0 >> np.uint32(8)).astype(np.float64) + 1) / TWO_24  # (0, 1]
    u2 = (w1 >> np.uint32(8)).astype(np.float64) / TWO_24  # [0, 1)
    return np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u2)


def reparam_kl_ref(mu, logvar, seed: int, offset: int = 0) -> np.ndarray:
    """[z, kl] as a (2, M, N) float64 array."""
    m, lv = mu.astype(np.float64), logvar.astype(np.float64)
    eps = normal_ref(mu.size, seed, offset).reshape(mu.shape)
    z = m + np.exp(lv / 2) * eps
    kl = (m * m + np.exp(lv) - 1 - lv) / 2
    return np.stack([z, kl])


# --8<-- [end:ref]


def seed_words(seed: int, offset: int) -> list:
    """The four uint32 words the kernels take: seed low, high; offset low, high."""
    return [np.uint32(v & 0xFFFFFFFF) for v in (seed, seed >> 32, offset, offset >> 32)]


def check_latent(op, named: dict, shape, out, seed, offset, block) -> tuple[int, int]:
    """Every check of the latent layer's launchers, before any work: the (M, N)
    float32 inputs, an out of (2, M, N), the seed and offset, the block."""
    for arg, arr in named.items():
        check_array(op, arg, arr, ndim=2)
        check_shape(op, arg, arr, shape)
    seed = check_uint64(op, "seed", seed, "the generator's key")
    offset = check_uint64(op, "offset", offset, "the first element's counter")
    size = int(np.prod(shape))
    if offset + size > 2**64:
        raise ValueError(f"{op}: `offset` + the number of elements runs past 2^64")
    if out is not None:
        check_array(op, "out", out, ndim=3)
        check_shape(op, "out", out, (2, *shape))
    check_block(op, block, ndim=1)
    return seed, offset


# --8<-- [start:launchers]
def reparam_kl_v1(mu, logvar, seed, offset=0, out=None, block=256):
    """mu, logvar (M, N) float32; returns (2, M, N): z, then each element's KL."""
    shape = getattr(mu, "shape", None)
    seed, offset = check_latent(
        OP, {"mu": mu, "logvar": logvar}, shape, out, seed, offset, block
    )
    stage = Staging(OP, mu, logvar, names=("mu", "logvar"))
    d_mu, d_lv = stage.inputs()
    d_out = stage.output(out, (2, *shape))
    n = int(np.prod(shape))
    if n:
        args = (d_mu, d_lv, d_out, np.int32(n), *seed_words(seed, offset))
        launch(OP, "reparam_kl_v1", (cdiv(n, block),), (block,), *args)
    return stage.result(d_out, out)


# --8<-- [end:launchers]


def reparam_kl(mu, logvar, seed, offset=0, out=None, version=1, block=256):
    return pick(FAMILY, version)(mu, logvar, seed, offset, out=out, block=block)


def make_inputs(rng, size):
    """size (M, N, offset): mu ~ N(0, 1), logvar in [-4, 2], a 64-bit seed."""
    M, N, offset = size
    mu = rng.standard_normal((M, N), dtype=np.float32)
    logvar = rng.uniform(-4, 2, (M, N)).astype(np.float32)
    return mu, logvar, int(rng.integers(0, 2**64, dtype=np.uint64)), offset


def numpy_baseline(mu, logvar, seed, offset):
    """NumPy on the CPU: the same Philox numbers (normal_ref), then z and the KL."""
    o = np.empty((2, *mu.shape), np.float32)

    def run():
        eps = normal_ref(mu.size, seed, offset).reshape(mu.shape)
        var = np.exp(logvar)
        np.add(mu, np.sqrt(var) * eps, out=o[0], casting="unsafe")
        o[1] = 0.5 * (mu * mu + var - 1 - logvar)
        return o

    return run


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "reparam_kl_v1",
            "one thread per element: a Philox normal, then z and the element's KL",
            reparam_kl_v1,
            blocks=(64, 256),
        ),
    ),
    ref=reparam_kl_ref,
    make_inputs=make_inputs,
    # (M, N, offset): one element, odd sides, an offset past 2^32 (its high word)
    check_sizes=((1, 1, 0), (7, 3, 5), (64, 2, 0), (129, 20, 2**32 - 3), (997, 33, 1)),
    bench_size=(65536, 64, 0),
    bytes_moved=lambda size: 4 * 4 * size[0] * size[1],  # read mu, logvar; write 2
    # logf, cosf, expf and sqrtf of float32 against float64: a few ulp of eps (up to
    # about 5.6) and of exp(logvar)
    tolerance=1e-5,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
