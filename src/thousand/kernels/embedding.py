"""GPT-2's input layer: each token's embedding plus its position's.

    out = embedding(idx, wte, wpe)   # idx (B, T) int32, wte (V, C), wpe (maxT, C)
    # out[b, t] = wte[idx[b, t]] + wpe[t]: (B, T, C) float32, T <= maxT

Token ids must lie in [0, V). The launchers check a host (NumPy) idx before
anything runs and raise ValueError naming the first bad id and where it is. A
device idx is not copied back to be checked by the launchers: that would be a
copy and a wait for the GPU on every call, which the benchmarks (and a training
loop) would pay; there the kernels themselves never read outside wte and write NaN
over the row of a bad id. The front door `embedding` checks a device idx too
(check_ids=True: one copy of B*T ints to the host), so a caller gets the
ValueError either way unless they turn it off.

python -m thousand.kernels.embedding
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.cuda.backend import is_device_array
from thousand.kernels.family import Family, Version, pick

OP = "embedding"


# --8<-- [start:ref]
def embedding_ref(idx, wte, wpe) -> np.ndarray:
    """wte[idx] + wpe[:T], each sum rounded once to float32."""
    T = idx.shape[1]
    out = wte.astype(np.float64)[idx] + wpe.astype(np.float64)[:T]  # (B, T, C)
    return out.astype(np.float32)


# --8<-- [end:ref]


def check_token_ids(op: str, idx, V: int) -> None:
    """Raise ValueError unless every id of the (B, T) array idx lies in [0, V);
    a device array is copied to the host for it."""
    ids = idx.get() if is_device_array(idx) else idx
    if not ids.size:
        return
    bad = (ids < 0) | (ids >= V)
    if bad.any():
        b, t = (int(k) for k in np.argwhere(bad)[0])
        raise ValueError(
            f"{op}: token ids must lie in [0, {V}) (the rows of `wte`), got "
            f"{int(ids[b, t])} at idx[{b}, {t}] ({int(bad.sum())} out of range)"
        )


def check_tables(op: str, idx, wte, wpe, T: int) -> tuple[int, int, int]:
    """V, C and maxT of the token and position tables, checked against T."""
    check_array(op, "wte", wte, ndim=2)  # (V, C)
    V, C = wte.shape
    check_array(op, "wpe", wpe, ndim=2)  # (maxT, C)
    if wpe.shape[1] != C:
        raise ValueError(
            f"{op}: `wpe` must have C = {C} columns like `wte`, got shape {wpe.shape}"
        )
    if T > wpe.shape[0]:
        raise ValueError(
            f"{op}: `idx` has T = {T} positions but `wpe` holds {wpe.shape[0]} "
            "(T must be at most maxT)"
        )
    return V, C, wpe.shape[0]


def _run(name, idx, wte, wpe, out, block, blocks_for):
    check_array(OP, "idx", idx, ndim=2, dtype=np.int32)  # (B, T)
    B, T = idx.shape
    V, C, _ = check_tables(OP, idx, wte, wpe, T)
    if out is not None:
        check_array(OP, "out", out, ndim=3)
        check_shape(OP, "out", out, (B, T, C))
    (block,) = check_block(OP, block, ndim=1)
    if block % 32:
        raise ValueError(f"{OP}: {name} needs whole warps, got a block of {block}")
    if not is_device_array(idx):
        check_token_ids(OP, idx, V)  # free on the host; see the module for devices
    stage = Staging(OP, idx, wte, wpe, names=("idx", "wte", "wpe"))
    d_in = stage.inputs()
    d_out = stage.output(out, (B, T, C))
    if B * T * C:
        grid = (blocks_for(block, B * T, C),)
        args = (np.int32(B * T), np.int32(T), np.int32(C), np.int32(V))
        launch(OP, name, grid, (block,), *d_in, d_out, *args)
    return stage.result(d_out, out)


# --8<-- [start:launchers]
def embedding_v1(idx, wte, wpe, out=None, block=256):
    """One thread per output element."""
    grid = lambda block, rows, C: cdiv(rows * C, block)  # noqa: E731
    return _run("embedding_v1", idx, wte, wpe, out, block, grid)


def embedding_v2(idx, wte, wpe, out=None, block=256):
    """One warp per (b, t) row, float4 where C % 4 == 0; block // 32 rows a block."""
    grid = lambda block, rows, C: cdiv(rows, block // 32)  # noqa: E731
    return _run("embedding_v2", idx, wte, wpe, out, block, grid)


# --8<-- [end:launchers]


def embedding(idx, wte, wpe, out=None, version=2, block=256, check_ids=True):
    """wte[idx] + wpe[:T] as a (B, T, C) float32 array. `check_ids`: copy a device
    idx to the host to refuse ids outside [0, V) (a host idx is always checked)."""
    run = pick(FAMILY, version)
    if check_ids and is_device_array(idx) and len(idx.shape) == 2:
        if hasattr(wte, "shape") and len(wte.shape) == 2:
            check_token_ids(OP, idx, wte.shape[0])
    return run(idx, wte, wpe, out=out, block=block)


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    B, T, C, V, maxT = size
    idx = rng.integers(0, V, (B, T), dtype=np.int32)
    idx.flat[0], idx.flat[-1] = 0, V - 1  # the first and last rows of wte
    wte = rng.standard_normal((V, C), dtype=np.float32)
    wpe = rng.standard_normal((maxT, C), dtype=np.float32)
    return idx, wte, wpe


BLOCKS = (32, 256, 1024)
FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "embedding_v1",
            "one thread per output element: a gather by division",
            embedding_v1,
            blocks=BLOCKS,
        ),
        Version(
            2,
            "embedding_v2",
            "one warp per row, float4 when C % 4 == 0",
            embedding_v2,
            blocks=BLOCKS,
        ),
    ),
    ref=embedding_ref,
    make_inputs=make_inputs,
    # (B, T, C, V, maxT). The CPU layer runs those whose product is at most 2^17:
    # one of everything; C odd, prime or 4k + 2 (scalar v2) and multiples of 4
    # (float4); V = 1 (every id 0); T = 1; T < maxT (wpe's tail unread); more rows
    # than a block of 1,024 threads covers in v1; GPT-2 small's widths, last.
    check_sizes=(
        (1, 1, 1, 1, 1),
        (2, 3, 5, 7, 4),
        (3, 7, 6, 1, 9),
        (4, 1, 12, 5, 3),
        (2, 5, 33, 3, 6),
        (2, 16, 64, 1, 16),
        (2, 8, 20, 40, 8),
        (3, 10, 36, 20, 12),
        (5, 37, 130, 11, 40),
        (4, 129, 771, 50, 200),
        (2, 1024, 768, 50257, 1024),
    ),
    # GPT-2 medium's widths (C = 1,024, V = 50,257, maxT = 1,024) for 64 sequences
    # of 1,024 tokens: out is 65,536 x 1,024 floats, 256 MiB, and wte (196 MiB) is
    # four times the L2, so gathered rows come from DRAM.
    bench_size=(64, 1024, 1024, 50257, 1024),
    # idx read; one wte row read per token (random ids over a table 4x the L2: a
    # repeated token's row has left the cache by its next use); out written; wpe's
    # T rows read once (4 MiB: the B sequences find them in the L2)
    bytes_moved=lambda s: 4 * (s[0] * s[1] * (1 + 2 * s[2]) + s[1] * s[2]),
    tolerance=0.0,  # one float32 addition, rounded once as the reference rounds it
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
