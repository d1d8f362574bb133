"""The head permutation of multi-head attention: a linear layer's (B, T, 3C)
output, read as (B, T, 3, H, d), into q, k and v of (B, H, T, d) each.

    qkv = linear(x)                                      # (B * T, 3C)
    qkv_h = split_heads(qkv.reshape(B, T, 3, H, d))      # (3, B, H, T, d)
    q, k, v = qkv_h[0], qkv_h[1], qkv_h[2]               # (B, H, T, d) each
    # backward: merge_heads(dqkv_h) -> (B, T, 3, H, d)   (thousand.kernels.merge_heads)

y[s, b, h, t, e] = x[b, t, s, h, e]: a pure permutation, no arithmetic, so every
version is bit-exact. The input is 5-D, (B, T, n, H, d), a free reshape of the
linear layer's output; n = 3 splits q, k, v, and n = 1 splits one (B, T, C) array
(merge_heads' backward pass). merge_heads is the inverse.

python -m thousand.kernels.split_heads
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import (
    Staging,
    cdiv,
    check_aligned,
    check_array,
    check_block,
    check_shape,
    grid_stride_blocks,
    launch,
)
from thousand.kernels.family import Family, Version, pick

OP = "split_heads"


# --8<-- [start:ref]
def split_heads_ref(x: np.ndarray) -> np.ndarray:
    """(B, T, n, H, d) -> (n, B, H, T, d)."""
    return np.ascontiguousarray(np.transpose(x, (2, 0, 3, 1, 4)))


# --8<-- [end:ref]


def run_permutation(op, name, x, out, block, dims, out_shape, vector, arg="x"):
    """Checks, staging and launch shared with merge_heads: `x` (the argument named
    `arg`) is 5-D, `out_shape` its permuted shape, `dims` (B, T, n, H, d) as the
    kernels take them."""
    (block,) = check_block(op, block, ndim=1)
    if out is not None:
        check_array(op, "out", out, ndim=5)
        check_shape(op, "out", out, out_shape)
    B, T, n, H, d = dims
    if vector and d % 4:
        raise ValueError(
            f"{op}: {name} moves float4s: the head dimension d (the last axis) "
            f"must be a multiple of 4, got {d}"
        )
    if vector and max(H, n * B) > 65535:  # the grid's y and z
        raise ValueError(
            f"{op}: {name} puts H and n * B on the grid's y and z: each must be "
            f"at most 65,535, got {H} and {n * B}"
        )
    stage = Staging(op, x, names=(arg,))
    (dx,) = stage.inputs()
    d_out = stage.output(out, out_shape)  # never x: threads read what others write
    if vector:
        check_aligned(op, arg, dx, 16)
        check_aligned(op, "out", d_out, 16)
    total = B * T * n * H * d
    if total:
        args = (dx, d_out, *(np.int32(a) for a in dims))
        if vector:  # one block row per (s, b, h): T x d / 4 float4s
            launch(op, name, (cdiv(T * d // 4, block), H, n * B), (block,), *args)
        else:
            launch(op, name, (grid_stride_blocks(block, total),), (block,), *args)
    return stage.result(d_out, out)


def _split(name, x, out, block, vector):
    check_array(OP, "x", x, ndim=5)  # (B, T, n, H, d)
    B, T, n, H, d = x.shape
    return run_permutation(
        OP, name, x, out, block, (B, T, n, H, d), (n, B, H, T, d), vector
    )


# --8<-- [start:launchers]
def split_heads_v1(x, out=None, block=256):
    """One thread per output element, a grid-stride loop."""
    return _split("split_heads_v1", x, out, block, vector=False)


def split_heads_v2(x, out=None, block=256):
    """float4, a block row per (s, b, h): d % 4 == 0, 16-byte aligned arrays."""
    return _split("split_heads_v2", x, out, block, vector=True)


# --8<-- [end:launchers]


def split_heads(x, out=None, version=2, block=256):
    """(B, T, n, H, d) float32 -> (n, B, H, T, d) (in `out` when given)."""
    return pick(FAMILY, version)(x, out=out, block=block)


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    return (rng.standard_normal(size, dtype=np.float32),)  # (B, T, n, H, d)


# (B, T, n, H, d): the smallest head; odd B, T and H; one token; T past a block's
# 256 threads (T d / 4 > 256 in v2); n = 1 (merge_heads' backward) and n = 3; the
# last two are GPT-2 small's attention (12 heads of 64) at T = 1,024 and a 128-wide
# head (the GPU layer's).
CHECK_SIZES = (
    (1, 1, 1, 1, 4),
    (1, 1, 3, 2, 8),
    (3, 5, 3, 3, 12),
    (2, 37, 1, 5, 16),
    (2, 131, 3, 2, 32),
    (1, 67, 3, 4, 64),
    (8, 1024, 3, 12, 64),
    (3, 1000, 1, 16, 128),
)
# GPT-2 small's qkv for 32 sequences of 1,024 tokens: 75.5 M floats, 302 MB each
# way, far past the 50 MB L2.
BENCH_SIZE = (32, 1024, 3, 12, 64)


def bytes_moved(size: tuple) -> int:
    return 2 * 4 * int(np.prod(size))  # every element read once and written once


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "split_heads_v1",
            "one thread per element: four integer divisions to find where it goes",
            split_heads_v1,
            blocks=(128, 256, 1024),
        ),
        Version(
            2,
            "split_heads_v2",
            "float4, the head on the grid's y and z: one division per 16 bytes",
            split_heads_v2,
            blocks=(64, 256, 1024),
        ),
    ),
    ref=split_heads_ref,
    make_inputs=make_inputs,
    check_sizes=CHECK_SIZES,
    bench_size=BENCH_SIZE,
    bytes_moved=bytes_moved,
    tolerance=0.0,  # a copy: every float arrives unchanged
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
