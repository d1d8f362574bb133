"""The backward pass of embedding: dwte and dwpe from dout.

    dwte, dwpe = embedding_backward(dout, idx, wte, wpe)
    # dout (B, T, C) float32, idx (B, T) int32 -> dwte (V, C), dwpe (maxT, C)

dwte[v] sums the rows of dout at the positions holding token v (a token absent
from idx gets zeros); dwpe[t] sums dout[:, t] over the batch for t < T (rows T and
up are zero: those positions were not used).

Why one output of (V + maxT, C). Both gradients come from one launch, and the
checks and benchmarks compare one array per family, so the launchers write them
into one buffer: rows 0 .. V-1 hold dwte, rows V .. V+maxT-1 dwpe (as
layer_norm_backward packs dx, dgamma and dbeta). `embedding_backward` returns the
two as views of it.

The forward's tables wte (V, C) and wpe (maxT, C) are passed for their shapes
only (V and maxT; their values are never read, nor copied to the device), as
autograd keeps the weight it differentiates; the arguments then mirror the
forward's. Ids are checked as in embedding (see thousand.kernels.embedding): a
host idx always, a device idx by the front door (check_ids=True).

python -m thousand.kernels.embedding_backward
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import (
    Staging,
    cdiv,
    check_array,
    check_block,
    check_shape,
    device_info,
    fill,
    launch,
    to_device,
)
from thousand.cuda.backend import is_device_array
from thousand.kernels.embedding import check_tables, check_token_ids
from thousand.kernels.family import Family, Version, pick

OP = "embedding_backward"


# --8<-- [start:ref]
def embedding_backward_ref(dout, idx, wte, wpe) -> np.ndarray:
    """dwte over dwpe, (V + maxT, C), summed in float64 and rounded once."""
    V, maxT = wte.shape[0], wpe.shape[0]
    B, T, C = dout.shape
    d64 = dout.astype(np.float64).reshape(B * T, C)
    grads = np.zeros((V + maxT, C))
    np.add.at(grads, idx.reshape(B * T), d64)  # a repeated id adds every time
    grads[V : V + T] = d64.reshape(B, T, C).sum(axis=0)
    return grads.astype(np.float32)


# --8<-- [end:ref]


def _staged(dout, idx, wte, wpe, out, block):
    """Checks, then the device arrays: dout, idx and the output."""
    check_array(OP, "dout", dout, ndim=3)  # (B, T, C)
    B, T, C = dout.shape
    check_array(OP, "idx", idx, ndim=2, dtype=np.int32)
    check_shape(OP, "idx", idx, (B, T))
    V, _, maxT = check_tables(OP, idx, wte, wpe, T)
    if wte.shape[1] != C:
        raise ValueError(
            f"{OP}: `wte` must have C = {C} columns like `dout`, got shape {wte.shape}"
        )
    if out is not None:
        check_array(OP, "out", out, ndim=2)
        check_shape(OP, "out", out, (V + maxT, C))
    (block,) = check_block(OP, block, ndim=1)
    if block % 32:
        raise ValueError(f"{OP}: needs whole warps, got a block of {block}")
    if not is_device_array(idx):
        check_token_ids(OP, idx, V)
    # The tables join the staging for its checks (one kind of array; no `out`
    # over any input) but are not copied: only their shapes are used.
    stage = Staging(OP, dout, idx, wte, wpe, names=("dout", "idx", "wte", "wpe"))
    d_dout, d_idx = (to_device(a) if stage.on_host else a for a in (dout, idx))
    d_out = stage.output(out, (V + maxT, C))
    return stage, d_dout, d_idx, d_out, (B, T, C, V, maxT, block)


# --8<-- [start:launchers]
def embedding_backward_v1(dout, idx, wte, wpe, out=None, block=256):
    """atomicAdd per element of dout into zeroed dwte and dwpe (see the module)."""
    stage, d_dout, d_idx, d_out, sizes = _staged(dout, idx, wte, wpe, out, block)
    B, T, C, V, maxT, block = sizes
    if C:
        fill(d_out, 0.0)  # the atomics add into it
        if B * T:
            args = (np.int32(B * T), np.int32(T), np.int32(C), np.int32(V))
            grid = (cdiv(B * T * C, block),)
            launch(
                OP, "embedding_backward_v1", grid, (block,), d_dout, d_idx, d_out, *args
            )
    return stage.result(d_out, out)


def embedding_backward_v2(dout, idx, wte, wpe, out=None, block=256):
    """Deterministic: a block per group of tokens sums their rows in position
    order, a block per group of positions sums dwpe over b; no float atomics."""
    stage, d_dout, d_idx, d_out, sizes = _staged(dout, idx, wte, wpe, out, block)
    B, T, C, V, maxT, block = sizes
    if C:
        # Enough token groups to keep every SM busy (each block walks all of idx,
        # from the L2), and a block per SM for dwpe; never more than rows to own.
        sms = device_info()["sm_count"]
        G, P = min(V, 4 * sms), min(maxT, sms)
        args = (np.int32(B), np.int32(T), np.int32(C), np.int32(V), np.int32(maxT))
        launch(
            OP,
            "embedding_backward_v2",
            (G + P,),
            (block,),
            d_dout,
            d_idx,
            d_out,
            *args,
            np.int32(G),
        )
    return stage.result(d_out, out)


# --8<-- [end:launchers]


# --8<-- [start:front-door]
def embedding_backward(
    dout, idx, wte, wpe, out=None, version=2, block=256, check_ids=True
):
    """dwte (V, C) and dwpe (maxT, C) for the upstream gradient `dout` (B, T, C)
    of embedding(idx, wte, wpe): views of one (V + maxT, C) array (`out` when
    given). `check_ids`: copy a device idx to the host to refuse ids outside
    [0, V) (a host idx is always checked)."""
    run = pick(FAMILY, version)
    if check_ids and is_device_array(idx) and len(idx.shape) == 2:
        if hasattr(wte, "shape") and len(wte.shape) == 2:
            check_token_ids(OP, idx, wte.shape[0])
    grads = run(dout, idx, wte, wpe, out=out, block=block)
    V = wte.shape[0]
    return grads[:V], grads[V:]


# --8<-- [end:front-door]


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    B, T, C, V, maxT = size
    dout = rng.standard_normal((B, T, C), dtype=np.float32)
    # Ids from the first half of the vocabulary only (V > 1), so most rows of dwte
    # must come out zero; V - 1 once, the last row.
    idx = rng.integers(0, max(1, V // 2), (B, T), dtype=np.int32)
    idx.flat[-1] = V - 1
    # the tables' values are never read: zeros (calloc'd pages) give their shapes
    return dout, idx, np.zeros((V, C), np.float32), np.zeros((maxT, C), np.float32)


BLOCKS = (32, 256, 1024)
FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "embedding_backward_v1",
            "atomicAdd per element: simple, the sums' order varies",
            embedding_backward_v1,
            blocks=BLOCKS,
        ),
        Version(
            2,
            "embedding_backward_v2",
            "tokens owned by blocks, rows summed in position order: deterministic",
            embedding_backward_v2,
            blocks=BLOCKS,
        ),
    ),
    ref=embedding_backward_ref,
    make_inputs=make_inputs,
    # (B, T, C, V, maxT). The CPU layer runs those whose product is at most 2^17.
    # One of everything; V = 1, every position one token (heavy duplicates: 256
    # rows into one in the fourth, 16,384 in the last but one); T = 1; T < maxT
    # (dwpe's zero rows); C odd or prime (scalar v2) and multiples of 4 (float4);
    # ids over half of V; more tokens than v2's token groups (50,257); GPT-2
    # small's widths.
    check_sizes=(
        (1, 1, 1, 1, 1),
        (2, 3, 5, 7, 4),
        (3, 7, 6, 1, 9),
        (1, 256, 2, 1, 256),
        (4, 1, 12, 5, 3),
        (2, 5, 33, 3, 6),
        (2, 16, 64, 1, 16),
        (2, 8, 20, 40, 8),
        (3, 10, 36, 20, 12),
        (5, 37, 130, 11, 40),
        (4, 129, 771, 50, 200),
        (64, 256, 96, 1, 256),
        (2, 1024, 768, 50257, 1024),
    ),
    # embedding's: GPT-2 medium's widths, 64 sequences of 1,024 tokens
    bench_size=(64, 1024, 1024, 50257, 1024),
    # dout read once; dwte (V, C) and dwpe (maxT, C) written once; idx read
    bytes_moved=lambda s: 4 * (s[0] * s[1] * (s[2] + 1) + (s[3] + s[4]) * s[2]),
    # Relative to the largest gradient: float32 sums of up to B*T rows. v2 adds in
    # position order, v1 in whatever order its atomics land. On the CPU backend at
    # most 3.8e-7 (256 rows into one token, 3 seeds, both versions, every block);
    # the 16,384 rows of one token in (64, 256, 96, 1, 256), summed in order in
    # float32 (np.cumsum, v2's order), are off by 4.2e-6: 1e-5 covers that and
    # v1's other orders of the same random walk.
    tolerance=1e-5,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
