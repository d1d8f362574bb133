"""The inverse of split_heads: (n, B, H, T, d) -> (B, T, n, H, d).

    o = attention(q, k, v, causal=True)                  # (B, H, T, d)
    y = merge_heads(o.reshape(1, B, H, T, d))            # (B, T, 1, H, d)
    y.reshape(B * T, C)                                  # the projection's input
    dqkv = merge_heads(dq_dk_dv)    # (3, B, H, T, d) -> (B, T, 3, H, d): backward

x[b, t, s, h, e] = y[s, b, h, t, e], bit-exact. With n = 1 it puts each token's
heads side by side again; with n = 3 it is split_heads' backward pass, and
split_heads is its own.

python -m thousand.kernels.merge_heads
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import check_array
from thousand.kernels.family import Family, Version, pick
from thousand.kernels.split_heads import BENCH_SIZE, CHECK_SIZES, run_permutation

OP = "merge_heads"


# --8<-- [start:ref]
def merge_heads_ref(y: np.ndarray) -> np.ndarray:
    """(n, B, H, T, d) -> (B, T, n, H, d)."""
    return np.ascontiguousarray(np.transpose(y, (1, 3, 0, 2, 4)))


# --8<-- [end:ref]


def _merge(name, y, out, block, vector):
    check_array(OP, "y", y, ndim=5)  # (n, B, H, T, d)
    n, B, H, T, d = y.shape
    return run_permutation(
        OP, name, y, out, block, (B, T, n, H, d), (B, T, n, H, d), vector, arg="y"
    )


# --8<-- [start:launchers]
def merge_heads_v1(y, out=None, block=256):
    """One thread per output element, a grid-stride loop."""
    return _merge("merge_heads_v1", y, out, block, vector=False)


def merge_heads_v2(y, out=None, block=256):
    """float4, a block row per (s, b, h): d % 4 == 0, 16-byte aligned arrays."""
    return _merge("merge_heads_v2", y, out, block, vector=True)


# --8<-- [end:launchers]


def merge_heads(y, out=None, version=2, block=256):
    """(n, B, H, T, d) float32 -> (B, T, n, H, d) (in `out` when given)."""
    return pick(FAMILY, version)(y, out=out, block=block)


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    B, T, n, H, d = size  # the same size tuple as split_heads
    return (rng.standard_normal((n, B, H, T, d), dtype=np.float32),)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "merge_heads_v1",
            "one thread per element: four integer divisions to find where it comes "
            "from",
            merge_heads_v1,
            blocks=(128, 256, 1024),
        ),
        Version(
            2,
            "merge_heads_v2",
            "float4, the head on the grid's y and z: one division per 16 bytes",
            merge_heads_v2,
            blocks=(64, 256, 1024),
        ),
    ),
    ref=merge_heads_ref,
    make_inputs=make_inputs,
    check_sizes=CHECK_SIZES,  # (B, T, n, H, d), split_heads' sizes
    bench_size=BENCH_SIZE,
    bytes_moved=lambda size: 2 * 4 * int(np.prod(size)),  # read once, write once
    tolerance=0.0,  # a copy: every float arrives unchanged
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
