"""The backward pass of attention: dq, dk and dv from do, float32, fused
(FlashAttention-2's backward, with dq summed deterministically).

    lse = np.empty((B, H, T), np.float32)
    o = attention(q, k, v, causal, lse=lse)
    dq, dk, dv = attention_backward(q, k, v, o, do, lse, causal)

Why one output of (3, B, H, T, d). The three gradients come from one launch and
the checks and benchmarks compare one array per family, so the launcher writes
them into one buffer: out[0] is dq, out[1] dk, out[2] dv, each (B, H, T, d) in
the conventions of attention.py. `attention_backward` returns the three views.

python -m thousand.kernels.attention_backward
"""

from __future__ import annotations

import math

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_shape, launch
from thousand.kernels.attention import (
    TILE,
    attention_parts,
    check_inputs,
    check_shared,
    fixed_block,
    padded_d,
)
from thousand.kernels.attention import make_inputs as forward_inputs
from thousand.kernels.family import Family, Version, pick

OP = "attention_backward"
THREADS = 256  # attention_backward_v1's block


# --8<-- [start:ref]
def attention_backward_parts(q, k, v, o, do, lse, causal: bool):
    """dq, dk, dv in float64, P recomputed from the lse given (the forward's)."""
    q, k, v, o, do = (np.asarray(a, np.float64) for a in (q, k, v, o, do))
    T, d = q.shape[-2:]
    scale = 1 / math.sqrt(d)
    s = q @ np.swapaxes(k, -1, -2) * scale  # (B, H, T, T)
    if causal:
        s[..., np.triu(np.ones((T, T), bool), 1)] = -np.inf
    p = np.exp(s - np.asarray(lse, np.float64)[..., None])  # softmax rows
    dp = do @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (do * o).sum(axis=-1, keepdims=True))  # (B, H, T, T)
    return (
        ds @ k * scale,
        np.swapaxes(ds, -1, -2) @ q * scale,
        np.swapaxes(p, -1, -2) @ do,
    )


def attention_backward_ref(q, k, v, o, do, lse, causal: bool) -> np.ndarray:
    """The three gradients packed into (3, B, H, T, d), rounded once to float32."""
    return np.stack(attention_backward_parts(q, k, v, o, do, lse, causal)).astype(
        np.float32
    )


# --8<-- [end:ref]


def shared_v1(d: int) -> int:
    """attention_backward_v1's shared memory in bytes: k, v, q, do tiles, P^T and
    dS^T, and D and lse of a query tile."""
    ld, lp = padded_d(d) + 4, TILE + 4
    return 4 * (TILE * (4 * ld + 2 * lp) + 2 * TILE)


# --8<-- [start:launchers]
def attention_backward_v1(q, k, v, o, do, lse, causal, out=None, block=THREADS):
    """Returns the (3, B, H, T, d) array of dq, dk and dv (see the module)."""
    names = ("q", "k", "v", "o", "do")
    B, H, T, d = check_inputs(OP, names, (q, k, v, o, do), causal)
    check_array(OP, "lse", lse, ndim=3)
    check_shape(OP, "lse", lse, (B, H, T))
    if out is not None:
        check_array(OP, "out", out, ndim=5)
        check_shape(OP, "out", out, (3, B, H, T, d))
    block = fixed_block(OP, "attention_backward_v1", block, THREADS)
    stage = Staging(OP, q, k, v, o, do, lse, names=(*names, "lse"))
    d_in = stage.inputs()
    d_out = stage.output(out, (3, B, H, T, d))
    if B * H * T:
        check_shared(OP, "attention_backward_v1", shared_v1(d))
        grid = (2 * cdiv(T, TILE), H, B)  # key blocks, then query blocks
        ints = (np.int32(H), np.int32(T), np.int32(d))
        scale = np.float32(1 / math.sqrt(d))
        args = (*d_in, d_out, *ints, scale, np.int32(causal))
        launch(OP, "attention_backward_v1", grid, (block,), *args, shared=shared_v1(d))
    return stage.result(d_out, out)


# --8<-- [end:launchers]


# --8<-- [start:front-door]
def attention_backward(q, k, v, o, do, lse, causal, out=None, version=1, block=256):
    """dq, dk and dv, each (B, H, T, d), for the upstream gradient `do` of
    o = attention(q, k, v, causal), given the `lse` it wrote. Views of one
    (3, B, H, T, d) array (`out` when given)."""
    run = pick(FAMILY, version)
    grads = run(q, k, v, o, do, lse, causal, out=out, block=block)
    n = grads.size // 3
    flat = grads.reshape(3 * n)
    return tuple(flat[i * n : (i + 1) * n].reshape(q.shape) for i in range(3))


# --8<-- [end:front-door]


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    q, k, v, causal = forward_inputs(rng, size)
    o, lse = (a.astype(np.float32) for a in attention_parts(q, k, v, causal))
    do = rng.standard_normal(q.shape, dtype=np.float32)
    return q, k, v, o, do, lse, causal


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "attention_backward_v1",
            "fused backward: P recomputed per tile; key and query blocks, no atomics",
            attention_backward_v1,
            blocks=(THREADS,),
            default_block=THREADS,
        ),
    ),
    ref=attention_backward_ref,
    make_inputs=make_inputs,
    # (B, H, T, d, causal), as attention's: the non-causal ones (a product of 0)
    # all run on the CPU layer, so they stay small; the last is what `python -m`
    # times on the CPU backend.
    check_sizes=(
        (1, 1, 1, 64, 0),
        (1, 1, 1, 16, 1),
        (2, 3, 37, 16, 0),
        (1, 2, 37, 16, 1),
        (1, 1, 65, 128, 0),
        (2, 1, 131, 64, 0),
        (1, 2, 131, 48, 1),
        (1, 1, 200, 128, 1),
        (2, 4, 1000, 64, 1),
        (1, 3, 1031, 128, 1),
        (1, 2, 100, 64, 1),
        (2, 2, 1031, 128, 0),  # the GPU checks a long row without the mask too
    ),
    bench_size=(4, 32, 4096, 128, 0),
    # The five products of the backward (S recomputed, dP = dO V^T, dV, dK, dQ),
    # T x T x d multiply-adds each: 2.5 times the forward's work, the count of the
    # FlashAttention papers; causal halves it. v1 computes S and dP twice (7
    # products, see attention_backward.cu): the rate counts the useful 5.
    flops=lambda size: (
        10 * size[0] * size[1] * size[2] * size[2] * size[3] // (2 if size[4] else 1)
    ),
    # Relative to the largest of the three gradients (a few units). dK and dV sum
    # over up to T queries, dQ over T keys, and dS = P (dP - D) subtracts two
    # float32 dot products: at most 1.7e-6 measured on the CPU backend (check sizes
    # up to T = 2,048, d = 128, several seeds); 1e-5 leaves room for the GPU's
    # exp2f (2 ulp) and its fused multiply-adds.
    tolerance=1e-5,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
