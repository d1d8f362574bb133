"""Inverted dropout from a counter-based generator (Philox-4x32-10) (A10).

    Y = dropout(X, p, seed, offset=step * X.size)        # training step `step`
    dX = dropout_backward(dY, p, seed, offset=step * X.size)   # the same mask

python -m thousand.kernels.dropout
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick

OP = "dropout"
U32 = np.uint64(0xFFFFFFFF)


# --8<-- [start:ref]
def philox4x32_10(counter, key):
    """Philox-4x32-10 on arrays: counter, four uint32 arrays; key, two. Products in
    uint64, so every step is exact unsigned 32-bit arithmetic, as on the GPU."""
    c = [np.asarray(x, np.uint64) for x in counter]
    k0, k1 = (np.asarray(x, np.uint64) for x in key)
    for _ in range(10):
        p0, p1 = np.uint64(0xD2511F53) * c[0], np.uint64(0xCD9E8D57) * c[2]
        c = [
            (p1 >> np.uint64(32)) ^ c[1] ^ k0,
            p1 & U32,
            (p0 >> np.uint64(32)) ^ c[3] ^ k1,
            p0 & U32,
        ]
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & U32, (k1 + np.uint64(0xBB67AE85)) & U32
    return [x.astype(np.uint32) for x in c]


def dropout_uniforms(n: int, seed: int, offset: int = 0) -> np.ndarray:
    """u for elements offset .. offset + n - 1: word j % 4 of counter j // 4, its
    top 24 bits over 2^24 (float64, exact; the same number as the kernel's float)."""
    j = np.uint64(offset) + np.arange(n, dtype=np.uint64)
    group = j >> np.uint64(2)
    zero = np.zeros(n, np.uint64)
    key = (np.uint64(seed) & U32, np.uint64(seed) >> np.uint64(32))
    words = np.stack(
        philox4x32_10((group & U32, group >> np.uint64(32), zero, zero), key)
    )
    bits = words[(j & np.uint64(3)).astype(np.intp), np.arange(n)]
    return (bits >> np.uint32(8)).astype(np.float64) / 2**24


def dropout_ref(X: np.ndarray, p: float, seed: int, offset: int = 0) -> np.ndarray:
    keep = dropout_uniforms(X.size, seed, offset) >= np.float32(p)  # p as float32
    return (
        X.astype(np.float64) * keep.reshape(X.shape) / (1 - np.float64(np.float32(p)))
    )


# --8<-- [end:ref]


def check_rate(op: str, p) -> float:
    if isinstance(p, bool) or not isinstance(p, int | float | np.integer | np.floating):
        raise ValueError(f"{op}: `p` must be a number in [0, 1), got {p!r}")
    if not 0 <= p < 1:
        raise ValueError(
            f"{op}: `p` (the probability of dropping a unit) must be in [0, 1), got "
            f"{p!r}: p = 1 drops everything and 1 / (1 - p) is infinite"
        )
    return float(p)


def check_uint64(op: str, name: str, v, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int | np.integer) or not 0 <= v < 2**64:
        raise ValueError(
            f"{op}: `{name}` ({what}) must be an int in [0, 2^64), got {v!r}"
        )
    return int(v)


def dropout_v1(X, p, seed, offset=0, out=None, block=256):
    """X of any shape with at least 2 axes (a batch of rows, an NHWC map; a vector
    is x[None]), seen flat; Y = X * keep / (1 - p). `out` may be X (in place)."""
    ndim = max(getattr(X, "ndim", 2), 2)  # a list: check_array names it
    check_array(OP, "X", X, ndim=ndim)
    p = check_rate(OP, p)
    seed = check_uint64(OP, "seed", seed, "the generator's key")
    offset = check_uint64(OP, "offset", offset, "the first element's counter")
    if offset + X.size > 2**64:
        raise ValueError(f"{OP}: `offset` + X.size runs past 2^64 counters")
    if out is not None:
        check_array(OP, "out", out, ndim=ndim)
        check_shape(OP, "out", out, X.shape)
    check_block(OP, block, ndim=1)
    stage = Staging(OP, X, names=("X",))
    (dX,) = stage.inputs()
    dY = stage.output(out, X.shape, in_place_ok=True)
    if dY.size:
        p32 = np.float32(p)
        scale = np.float32(1 / (1 - np.float64(p32)))
        words = [
            np.uint32(v & 0xFFFFFFFF) for v in (seed, seed >> 32, offset, offset >> 32)
        ]
        grid = (cdiv(dY.size, block),)
        args = (dX, dY, np.int32(dY.size), p32, scale, *words)
        launch(OP, "dropout_v1", grid, (block,), *args)
    return stage.result(dY, out)


def dropout(X, p, seed, offset=0, out=None, version=1, block=256):
    return pick(FAMILY, version)(X, p, seed, offset, out=out, block=block)


def dropout_backward(dY, p, seed, offset=0, out=None, version=1, block=256):
    """dX = dY * keep / (1 - p) with the forward's mask: the same seed and offset
    draw the same uniforms, so this is the forward applied to dY."""
    return pick(FAMILY, version)(dY, p, seed, offset, out=out, block=block)


def make_inputs(rng, size):
    """size (*shape, p in percent, offset): X of N(0, 1), a 64-bit seed."""
    *shape, percent, offset = size
    X = rng.standard_normal(shape, dtype=np.float32)
    return X, percent / 100, int(rng.integers(0, 2**64, dtype=np.uint64)), offset


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "dropout_v1",
            "one thread per element: Philox-4x32-10 of its index, keep or zero",
            dropout_v1,
            blocks=(64, 256),
        ),
    ),
    ref=dropout_ref,
    make_inputs=make_inputs,
    # (*shape, p %, offset): p = 0 (the identity), one element, an NHWC map with odd
    # sides, p = 0.9, an offset not a multiple of 4 and one past 2^32 (its high word)
    check_sizes=(
        (1, 1, 0, 0),
        (7, 13, 0, 0),
        (1, 1, 50, 3),
        (3, 5, 7, 11, 50, 0),
        (2, 9, 9, 64, 90, 2**32 - 5),
        (1000, 101, 10, 12345),
    ),
    bench_size=(32, 56, 56, 64, 50, 0),
    # read X, write Y: the mask is computed, not stored
    bytes_moved=lambda size: 2 * 4 * int(np.prod(size[:-2])),
    tolerance=1e-6,  # one float32 product with 1 / (1 - p) rounded to float32
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
