"""Scaled dot-product attention, forward, float32: the unfused way (v1), which
keeps every head's T x T scores in device memory, and the fused FlashAttention way
(v2), which never forms them.

    o = attention(q, k, v, causal)          # q, k, v: (B, H, T, d) float32, C order
    lse = np.empty((B, H, T), np.float32)
    o = attention(q, k, v, causal, lse=lse)  # what attention_backward takes (v2)

The conventions every attention family of the package shares (attention_backward,
attention_bf16): q, k, v and o are (batch, heads, sequence, head dim), C order;
scale = 1 / sqrt(d); `causal` (a bool) masks key j > query i; lse, when asked
for, is each row's natural log-sum-exp of the scaled, masked scores, (B, H, T)
float32. A family's size tuple is (B, H, T, d, causal) with causal 0 or 1, and
make_inputs returns (q, k, v, causal) with causal a plain bool. d is a multiple
of 4 (16-byte loads) up to 128 (what a block keeps on chip).

python -m thousand.kernels.attention
"""

from __future__ import annotations

import math
import os

import numpy as np

from thousand.cuda import (
    Staging,
    backend,
    cdiv,
    check_aligned,
    check_array,
    check_block,
    check_index_range,
    check_shape,
    empty,
    launch,
    on_cpu,
    shared_memory_optin,
)
from thousand.kernels.family import Family, Version, pick
from thousand.kernels.layer_launch import scratch
from thousand.kernels.matmul import matmul
from thousand.kernels.softmax import softmax
from thousand.kernels.transpose import transpose

OP = "attention"
TILE = 64  # queries per block and keys per tile (attention_tiles.cuh)
THREADS = 128  # attention_v2's block
MAX_D = 128


# --8<-- [start:ref]
def attention_parts(q, k, v, causal: bool):
    """o (B, H, T, d) and lse (B, H, T) in float64."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    T, d = q.shape[-2:]
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(d)  # (B, H, T, T)
    if causal:
        s[..., np.triu(np.ones((T, T), bool), 1)] = -np.inf  # key j > query i
    m = s.max(axis=-1, keepdims=True, initial=-np.inf)  # finite: key 0 is never masked
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    return (e / total) @ v, (m + np.log(total))[..., 0]


def attention_ref(q, k, v, causal: bool) -> np.ndarray:
    """o in float64, rounded once to float32."""
    return attention_parts(q, k, v, causal)[0].astype(np.float32)


# --8<-- [end:ref]


def padded_d(d: int) -> int:
    """The head dimension the kernels are compiled for: d rounded up to 16, 32, 64
    or 128 (attention_tiles.cuh)."""
    return next(D for D in (16, 32, 64, 128) if d <= D)


def check_inputs(op, names, arrays, causal, *, shape=None) -> tuple:
    """Each of `arrays` a C-contiguous (B, H, T, d) float32 array of one shape, d a
    multiple of 4 up to 128, 16-byte aligned on the device; causal a bool.
    Returns (B, H, T, d)."""
    for name, a in zip(names, arrays, strict=True):
        check_array(op, name, a, ndim=4)
    shape = tuple(shape or arrays[0].shape)
    for name, a in zip(names, arrays, strict=True):
        check_shape(op, name, a, shape)
        check_aligned(op, name, a, 16)
    B, H, T, d = shape
    if d % 4 or not 4 <= d <= MAX_D:
        raise ValueError(
            f"{op}: the head dimension d (the last axis) must be a multiple of 4 "
            f"from 4 to {MAX_D}, got {d}"
        )
    if not isinstance(causal, bool | np.bool_):
        raise ValueError(
            f"{op}: `causal` must be a bool (True masks key j > query i), got "
            f"{causal!r} ({type(causal).__name__})"
        )
    if max(B, H) > 65535:  # the grid's y and z
        raise ValueError(f"{op}: B and H must be at most 65,535, got {B} and {H}")
    return B, H, T, d


def fixed_block(op, name, block, threads) -> int:
    (block,) = check_block(op, block, ndim=1)
    if block != threads:
        raise ValueError(
            f"{op}: {name} is written for blocks of {threads} threads, got {block}"
        )
    return block


def check_shared(op, name, need) -> None:
    """A clear error where the GPU gives a block less shared memory than `need`."""
    if not on_cpu() and shared_memory_optin() < need:
        raise ValueError(
            f"{op}: {name} needs {need // 1024} KiB of shared memory per block and "
            f"this GPU allows {shared_memory_optin() // 1024} KiB (H100 and H200 "
            "have 227 KiB)"
        )


def _stage(q, k, v, causal, out, lse):
    """Checks, then the staged inputs, output and lse (a scratch buffer when the
    caller does not want it)."""
    B, H, T, d = check_inputs(OP, ("q", "k", "v"), (q, k, v), causal)
    if out is not None:
        check_array(OP, "out", out, ndim=4)
        check_shape(OP, "out", out, (B, H, T, d))
        check_aligned(OP, "out", out, 16)
    if lse is not None:
        check_array(OP, "lse", lse, ndim=3)
        check_shape(OP, "lse", lse, (B, H, T))
    stage = Staging(OP, q, k, v, names=("q", "k", "v"))
    d_in = stage.inputs()
    d_out = stage.output(out, (B, H, T, d))
    stage.named["out"] = out  # lse may overlap no input and not o
    if lse is None:
        d_lse = scratch(OP, "lse", (B, H, T))
    else:
        d_lse = stage.output(lse, (B, H, T), name="lse")
    return stage, d_in, d_out, d_lse, (B, H, T, d)


# ---- v1: the scores in device memory ----

_SCORES: dict = {}  # backend -> the score buffer, kept between calls (see _scores)


def free_device_bytes() -> int:
    """What an allocation can still get: the GPU's free memory, or on the CPU
    backend (whose device memory is host memory) the host's available memory."""
    if on_cpu():
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    from thousand.cuda import driver

    return driver().mem_get_info()[0]


def _scores(heads: int, T: int):
    """heads score matrices of T x T floats, each starting on 16 bytes (matmul_v7's
    float4 loads and stores), in one buffer kept for the next call, as the
    benchmarks time kernels and not cudaMalloc. Returns (buffer, head stride)."""
    check_index_range(OP, "one head's scores", T, T)  # the kernels index a head
    stride = cdiv(T * T, 4) * 4
    n = heads * stride
    have = _SCORES.get(backend())
    if have is not None and have.shape[0] >= n:
        return have, stride
    _SCORES.pop(backend(), None)  # the smaller buffer goes first
    need = 4 * n
    why = ""
    if need > free_device_bytes():
        why = f"{free_device_bytes():,} bytes are free"
    else:
        try:
            have = empty((n,))
        except Exception as e:  # noqa: BLE001  (PyCUDA's MemoryError is its own)
            why = f"the allocation failed: {e}"
    if why:
        raise MemoryError(
            f"{OP}: attention_v1 keeps the scores of all {heads:,} heads, "
            f"{T:,} x {T:,} floats each, in device memory: {need:,} bytes "
            f"({need / 2**30:.1f} GiB), and {why}. attention_v2 never forms them"
        )
    _SCORES[backend()] = have
    return have, stride


def _heads(d_arr, heads, rows, cols, stride=None):
    """Head h of a (B, H, rows, cols) device array, or of a buffer of heads spaced
    `stride` floats apart: a (rows, cols) view."""
    stride = stride or rows * cols
    flat = d_arr.reshape(d_arr.size) if len(d_arr.shape) > 1 else d_arr
    for h in range(heads):
        yield flat[h * stride : h * stride + rows * cols].reshape(rows, cols)


# --8<-- [start:launchers]
def attention_v1(q, k, v, causal, out=None, block=256, lse=None):
    """Unfused: S = q k^T (matmul), scale and mask (this family's kernel),
    softmax, o = P v (matmul), one head at a time in a Python loop (the scale and
    mask kernel is one launch over every head). The scores of all B * H heads
    live in device memory at once. lse is not computed: softmax.cu keeps no
    log-sum-exp, so `lse=` is refused (version 2 writes it)."""
    if lse is not None:
        raise ValueError(
            f"{OP}: attention_v1 normalises with softmax.cu, which keeps no "
            "log-sum-exp: pass `lse` to version 2"
        )
    (block,) = check_block(OP, block, ndim=1)
    stage, (dq, dk, dv), d_out, _, (B, H, T, d) = _stage(q, k, v, causal, out, None)
    heads = B * H
    if heads and T:
        # k^T first: it is small, and the scores' check then sees what is left
        kt = scratch(OP, "k transposed", (heads, d, T))
        s, stride = _scores(heads, T)
        qs, ks, vs, os_ = (list(_heads(a, heads, T, d)) for a in (dq, dk, dv, d_out))
        kts, ss = list(_heads(kt, heads, d, T)), list(_heads(s, heads, T, T, stride))
        for h in range(heads):
            transpose(ks[h], out=kts[h])  # (d, T)
            matmul(qs[h], kts[h], out=ss[h])  # S = q k^T, (T, T)
        grid = (min(cdiv(T * T, block), 1024), min(heads, 65535))
        args = (np.int32(heads), np.int32(T), np.int64(stride))
        scale = np.float32(1 / math.sqrt(d))
        launch(OP, "attention_v1", grid, (block,), s, *args, scale, np.int32(causal))
        for h in range(heads):
            softmax(ss[h], out=ss[h])  # P, in place
            matmul(ss[h], vs[h], out=os_[h])  # o = P v
    return stage.result(d_out, out)


def shared_v2(d: int) -> int:
    """attention_v2's shared memory: q, k (or P) and v tiles, in bytes."""
    ld, lp = padded_d(d) + 4, TILE + 4
    return 4 * TILE * (2 * ld + max(ld, lp))


def attention_v2(q, k, v, causal, out=None, block=THREADS, lse=None):
    """Fused (FlashAttention-2's loop order): one block per 64 queries of a head,
    online softmax over key tiles of 64; writes o and, when given, lse."""
    block = fixed_block(OP, "attention_v2", block, THREADS)
    stage, d_in, d_out, d_lse, (B, H, T, d) = _stage(q, k, v, causal, out, lse)
    if B * H * T:
        check_shared(OP, "attention_v2", shared_v2(d))
        scale = np.float32(1 / math.sqrt(d))
        ints = (np.int32(H), np.int32(T), np.int32(d))
        launch(
            OP,
            "attention_v2",
            (cdiv(T, TILE), H, B),
            (block,),
            *d_in,
            d_out,
            d_lse,
            *ints,
            scale,
            np.int32(causal),
            shared=shared_v2(d),
        )
    if stage.on_host and lse is not None:
        d_lse.get(ary=lse)
    return stage.result(d_out, out)


# --8<-- [end:launchers]


# --8<-- [start:front-door]
def attention(q, k, v, causal=False, out=None, version=2, block=None, lse=None):
    """softmax(q k^T / sqrt(d), masked where key j > query i if `causal`) v for
    (B, H, T, d) float32 q, k, v. Returns o (in `out` when given); writes each
    row's log-sum-exp into `lse` ((B, H, T), version 2) when given."""
    ver = FAMILY.version(version)
    block = ver.default_block if block is None else block
    return pick(FAMILY, version)(q, k, v, causal, out=out, block=block, lse=lse)


# --8<-- [end:front-door]


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    B, H, T, d, causal = size
    q, k, v = (rng.standard_normal((B, H, T, d), dtype=np.float32) for _ in range(3))
    return q, k, v, bool(causal)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "attention_v1",
            "unfused: the T x T scores of every head in DRAM, six passes over them",
            attention_v1,
            blocks=(256,),
        ),
        Version(
            2,
            "attention_v2",
            "fused FlashAttention: q on chip, k and v streamed, online softmax",
            attention_v2,
            blocks=(THREADS,),
            default_block=THREADS,
        ),
    ),
    ref=attention_ref,
    make_inputs=make_inputs,
    # (B, H, T, d, causal). One query; primes and lengths just past a tile (37,
    # 65, 131); d = 16, 64, 128 and one between (48: a padded tile); B * H > 1.
    # Non-causal sizes have a product of 0, so the CPU layer runs all of them:
    # they stay small. The larger ones are causal (the GPU layer's), and the last
    # is the size `python -m` times on the CPU backend.
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
        (1, 1, 4096, 128, 1),
        (1, 2, 100, 64, 1),
        (2, 2, 1031, 128, 0),  # the GPU checks a long row without the mask too
    ),
    # fp32 q, k, v are 256 MiB each; v1's scores 8 GiB (fine on a 141 GB H200)
    bench_size=(4, 32, 4096, 128, 0),
    # Two products of T x T x d multiply-adds per head (S = q k^T, o = P v), 2
    # FLOPs each; causal halves the useful work (the convention of the
    # FlashAttention papers), whatever a kernel does above the diagonal.
    flops=lambda size: (
        4 * size[0] * size[1] * size[2] * size[2] * size[3] // (2 if size[4] else 1)
    ),
    # |o| is a few units (a weighted mean of the rows of v). The float32 dot
    # products over d, the exponentials and the sums over T keys, each in its own
    # order: at most 6.0e-7 measured on the CPU backend (v1 and v2, every check size
    # up to T = 4,096, d = 128, several seeds). The GPU's expf and exp2f are within
    # 2 ulp where glibc's are within 1, and it fuses multiply-adds: 2e-6 leaves
    # room for that.
    tolerance=2e-6,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
