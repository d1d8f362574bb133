"""C = A^T B for A (K, M) and B (K, N): a linear layer's weight gradient X^T dY,
with the sum over K (the batch's tokens) split across the grid so that a few
hundred by a few hundred outputs still fill the GPU, and optionally the bias's
gradient (the column sums of B) in the same pass.

    dW = matmul_tn(X, dY)              # X (tokens, n_in), dY (tokens, n_out)
    dW = matmul_tn(X, dY, db=db)       # and db[j] = sum over tokens of dY[:, j]

python -m thousand.kernels.matmul_tn
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import (
    Staging,
    cdiv,
    check_aligned,
    check_array,
    check_block,
    check_index_range,
    check_shape,
    device_info,
    empty,
    launch,
)
from thousand.kernels.col_sum import col_sum
from thousand.kernels.family import Family, Version, pick

OP = "matmul_tn"
TILE = 128  # the block's tile of C is TILE x TILE
MIN_SLICE = 256  # the fewest rows of K a slice sums: below, the adds cost more


# --8<-- [start:ref]
def matmul_tn_ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """In float64: A^T B."""
    return a.astype(np.float64).T @ b.astype(np.float64)


# --8<-- [end:ref]


# --8<-- [start:slices]
def slices_for(M: int, N: int, K: int) -> int:
    """How many slices of K: enough blocks for two per SM, each slice at least
    MIN_SLICE rows of K (and one slice when the tiles alone fill the GPU)."""
    tiles = cdiv(M, TILE) * cdiv(N, TILE)
    want = cdiv(2 * device_info()["sm_count"], tiles)
    return max(1, min(want, K // MIN_SLICE))


# --8<-- [end:slices]

_parts: dict = {}  # (slices, M, N) -> the partial products' workspace, reused


def _workspace(shape):
    d = _parts.get(shape)
    if d is None:
        d = _parts[shape] = empty(shape, np.float32)
    return d


def matmul_tn_v1(a, b, out=None, block=256, db=None, slices=None):
    """`slices` of K (None: slices_for); db, an (N,) float32 array, also gets
    the column sums of b when given."""
    check_array(OP, "a", a, ndim=2)  # (K, M)
    check_array(OP, "b", b, ndim=2)  # (K, N)
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"{OP}: a and b must have the same rows K (the summed axis): a is "
            f"{a.shape}, b is {b.shape}"
        )
    (K, M), N = a.shape, b.shape[1]
    check_index_range(OP, "a", K, M)
    check_index_range(OP, "b", K, N)
    if out is not None:
        check_array(OP, "out", out, ndim=2)
        check_shape(OP, "out", out, (M, N))
    if db is not None:
        check_array(OP, "db", db, ndim=1)
        check_shape(OP, "db", db, (N,))
    (block,) = check_block(OP, (block,))
    if block != 256:
        raise ValueError(
            f"{OP}: matmul_tn_v1 is written for blocks of 256, got {block}"
        )
    S = slices_for(M, N, K) if slices is None else slices
    if isinstance(S, bool) or not isinstance(S, int | np.integer) or S < 1:
        raise ValueError(f"{OP}: slices must be an int >= 1, got {slices!r}")
    check_index_range(OP, "the partial products", S * M, N)
    stage = Staging(OP, a, b, names=("a", "b"))
    da, dbm = stage.inputs()
    d_out = stage.output(out, (M, N))
    for name, x in (("a", da), ("b", dbm), ("out", d_out)):
        check_aligned(OP, name, x, 16)
    # db: the same kind of array as the inputs, overlapping none of them
    d_bias = None if db is None else stage.output(db, (N,), name="db")
    if M and N:
        if K == 0:  # an empty sum: no kernel reads a 0-row A
            d_out.fill(0)
            if d_bias is not None:
                d_bias.fill(0)
        else:
            _launch(da, dbm, d_out, d_bias, M, N, K, min(S, K))
    if d_bias is not None:
        stage.result(d_bias, db)  # copied back into a host db
    return stage.result(d_out, out)


def _launch(da, dbm, d_out, d_bias, M, N, K, S):
    kslice = cdiv(cdiv(K, S), 16) * 16  # whole BK tiles in every slice but the last
    S = cdiv(K, kslice)
    parts = d_out if S == 1 else _workspace((S, M, N))
    bias_parts = d_bias if S == 1 or d_bias is None else _workspace((S, N))
    grid = (cdiv(N, TILE), cdiv(M, TILE), S)
    with_bias = np.int32(d_bias is not None)
    bias_arg = parts if d_bias is None else bias_parts  # never written without it
    ints = (np.int32(M), np.int32(N), np.int32(K), np.int32(kslice))
    launch(OP, "matmul_tn_v1", grid, (256,), da, dbm, parts, bias_arg, with_bias, *ints)
    if S > 1:  # the slices added in order: col_sum over (S, M N)
        col_sum(parts.reshape(S, M * N), out=d_out.reshape(M * N))
        if d_bias is not None:
            col_sum(bias_parts, out=d_bias)


def matmul_tn(a, b, out=None, version=1, block=256, db=None, slices=None):
    """A^T B for a (K, M), b (K, N) float32 -> (M, N) (in `out` when given)."""
    return pick(FAMILY, version)(a, b, out=out, block=block, db=db, slices=slices)


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    M, N, K = size
    return (
        rng.standard_normal((K, M), dtype=np.float32),
        rng.standard_normal((K, N), dtype=np.float32),
    )


# (M, N, K): ones; edges of a tile and of a float4 (M, N not multiples of 4 or of
# 128); K shorter than one 16-deep tile, and long enough to be split; the last is
# the "large" GPT's MLP weight gradient at 64 x 128 tokens.
CHECK_SIZES = (
    (1, 1, 1),
    (3, 5, 7),
    (4, 8, 0),
    (130, 36, 300),
    (129, 257, 1000),
    (64, 64, 4099),
    (384, 1536, 8192),
)
BENCH_SIZE = (384, 1536, 8192)

FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "matmul_tn_v1",
            "v7's warp tiling on A^T B, the sum over K split across the grid",
            matmul_tn_v1,
            blocks=(256,),
        ),
    ),
    ref=matmul_tn_ref,
    make_inputs=make_inputs,
    check_sizes=CHECK_SIZES,
    bench_size=BENCH_SIZE,
    flops=lambda size: 2 * size[0] * size[1] * size[2],
    # sums of K products of N(0, 1) values: error like sqrt(K) ulps of the sum
    tolerance=1e-5,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
