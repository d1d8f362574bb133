"""Fused attention on tensor cores, in bfloat16: the rung that competes with the
library (FlashAttention-2's forward, written with mma.sync and ldmatrix).

    import ml_dtypes
    bf16 = ml_dtypes.bfloat16
    o = attention_bf16(q, k, v, causal=True)   # q, k, v: (B, H, T, d) bf16, d 64 or 128
    lse = np.empty((B, H, T), np.float32)
    o = attention_bf16(q, k, v, causal=True, lse=lse)  # what a backward pass needs

NumPy has no bfloat16 of its own; ml_dtypes (the type JAX and TensorFlow use) adds
one, and PyCUDA moves its arrays like any other 2-byte type. The float32 rungs and
their conventions (layout, scale 1/sqrt(d), the causal mask, lse) are in
attention.py; this family differs only in the element type of q, k, v and o.

python -m thousand.kernels.attention_bf16      (needs a GPU: tensor cores)
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from thousand.cuda import (
    Staging,
    cdiv,
    check_array,
    check_block,
    check_shape,
    device_info,
    launch,
)
from thousand.kernels.attention import attention_ref
from thousand.kernels.attention import make_inputs as float32_inputs
from thousand.kernels.family import Family, Version, pick

OP = "attention_bf16"
BF16 = np.dtype(ml_dtypes.bfloat16)
KEYS = 64  # keys per shared-memory tile (BC in the .cu)
PAD = 8  # bf16 of padding per shared row (PAD in the .cu)


# --8<-- [start:ref]
def attention_bf16_ref(q, k, v, causal) -> np.ndarray:
    """The float32 family's reference (float64 inside) on the bf16 values as given,
    rounded once to bf16."""
    wide = (np.asarray(a).astype(np.float32) for a in (q, k, v))
    return attention_ref(*wide, causal).astype(BF16)


# --8<-- [end:ref]


def _run(name, rows, q, k, v, causal, out, block, lse):
    """Check, stage, launch `name`: 4 warps, `rows` queries a block."""
    for arg, a in (("q", q), ("k", k), ("v", v)):
        check_array(OP, arg, a, ndim=4, dtype=BF16)  # (B, H, T, d)
    B, H, T, d = q.shape
    for arg, a in (("k", k), ("v", v)):
        check_shape(OP, arg, a, (B, H, T, d))
    if d not in (64, 128):
        raise ValueError(f"{OP}: head dimension d must be 64 or 128, got {d}")
    if not isinstance(causal, bool | np.bool_):
        raise ValueError(f"{OP}: `causal` must be True or False, got {causal!r}")
    if out is not None:
        check_array(OP, "out", out, ndim=4, dtype=BF16)
        check_shape(OP, "out", out, (B, H, T, d))
    if lse is not None:
        check_array(OP, "lse", lse, ndim=3)
        check_shape(OP, "lse", lse, (B, H, T))
    (block,) = check_block(OP, block, ndim=1)
    if block != 128:
        raise ValueError(
            f"{OP}: {name} is written for 4 warps (128 threads), got a block of {block}"
        )
    if float(device_info()["compute_capability"]) < 8.0:
        raise ValueError(f"{OP}: {name} needs bf16 tensor cores (sm_80 or later)")
    stage = Staging(OP, q, k, v, names=("q", "k", "v"))
    d_q, d_k, d_v = stage.inputs()
    d_o = stage.output(out, (B, H, T, d), BF16)
    stage.named["out"] = out
    d_lse = None if lse is None else stage.output(lse, (B, H, T), name="lse")
    if B * H * T:
        if B * H > 65535:
            raise ValueError(f"{OP}: B * H = {B * H} exceeds the grid's 65,535 rows")
        grid = (cdiv(T, rows), B * H)
        shared = (rows + 2 * KEYS) * (d + PAD) * BF16.itemsize  # Q, K and V tiles
        args = (d_q, d_k, d_v, d_o, np.uintp(0) if d_lse is None else d_lse)
        scale = np.float32(1 / math.sqrt(d))
        launch(
            OP,
            name,
            grid,
            (block,),
            *args,
            np.int32(T),
            np.int32(d),
            np.int32(causal),
            scale,
            shared=shared,
        )
    if stage.on_host and lse is not None:
        d_lse.get(ary=lse)
    return stage.result(d_o, out)


# --8<-- [start:launchers]
def attention_bf16_v1(q, k, v, causal, out=None, block=128, lse=None):
    """64 queries a block; K and V tiles of 64 keys through shared memory."""
    return _run("attention_bf16_v1", 64, q, k, v, causal, out, block, lse)


def attention_bf16_v2(q, k, v, causal, out=None, block=128, lse=None):
    """128 queries a block, 32 a warp: each K, V fragment feeds two mma."""
    return _run("attention_bf16_v2", 128, q, k, v, causal, out, block, lse)


# --8<-- [end:launchers]


def attention_bf16(q, k, v, causal=False, out=None, version=2, lse=None):
    """softmax(q k^T / sqrt(d)) v over (B, H, T, d) bf16 arrays, optionally causal;
    each row's log-sum-exp into `lse` ((B, H, T) float32) when given."""
    v_ = FAMILY.version(version)
    return pick(FAMILY, version)(
        q, k, v, causal, out=out, block=v_.default_block, lse=lse
    )


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    """The float32 family's inputs, rounded to bf16."""
    q, k, v, causal = float32_inputs(rng, size)
    return q.astype(BF16), k.astype(BF16), v.astype(BF16), causal


def _flops(size) -> int:
    B, H, T, d, causal = size
    full = 4 * B * H * T * T * d  # Q K^T and P V: 2 T^2 d multiply-adds per head
    return full // 2 if causal else full  # causal: the half below the diagonal


TENSOR_CORES = "mma.sync on bf16 tensor cores, ldmatrix and cp.async are PTX"
FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "attention_bf16_v1",
            "FlashAttention-2 on tensor cores: mma.sync, ldmatrix, P kept in registers",
            attention_bf16_v1,
            blocks=(128,),
            default_block=128,
            gpu_only=TENSOR_CORES,
        ),
        Version(
            2,
            "attention_bf16_v2",
            "32 queries a warp: each fragment read from shared memory feeds two mma",
            attention_bf16_v2,
            blocks=(128,),
            default_block=128,
            gpu_only=TENSOR_CORES,
        ),
    ),
    ref=attention_bf16_ref,
    make_inputs=make_inputs,
    # (B, H, T, d, causal): one query; primes and lengths past a tile by one (65,
    # 129) or short of one (127); both head sizes, causal and not; several heads.
    check_sizes=(
        (1, 1, 1, 64, 0),
        (1, 1, 1, 128, 1),
        (2, 3, 37, 64, 1),
        (1, 2, 65, 128, 0),
        (1, 2, 127, 128, 1),
        (2, 1, 129, 64, 0),
        (1, 1, 257, 128, 1),
        (1, 2, 1000, 64, 1),
        (1, 1, 1031, 128, 0),
        (2, 2, 2048, 128, 1),
    ),
    bench_size=(4, 32, 4096, 128, 0),
    flops=_flops,
    out_dtype=BF16,
    # bf16 keeps 8 significant bits: o is rounded once (2^-9 relative), and P is
    # rounded to bf16 before P V, a relative error of up to 2^-9 in each weight.
    tolerance=1e-2,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
