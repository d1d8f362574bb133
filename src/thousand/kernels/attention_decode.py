"""Attention for one new token per sequence against a key-value cache: the
decoding step of generation.

    kv_append(k_cache, k, pos, out=k_cache)          # the new token's key and value,
    kv_append(v_cache, v, pos, out=v_cache)          # row pos of every (b, h)
    o = attention_decode(q, k_cache, v_cache, pos + 1)          # (B, H, 1, d)

q is (B, H, 1, d), the caches (B, H, Tmax, d), float32, C order; `length` (an int,
1 <= length <= Tmax) says how many rows of the caches hold keys and values, and
o[b, h, 0] = softmax(q k[:length]^T / sqrt(d)) v[:length]. No mask beyond that: the
new token sees every earlier token and itself, so a loop that appends each token
and calls this gives, row by row, what one causal attention call over the whole
sequence gives (tests/cpu/test_kv_cache.py holds that). Rows from `length` on are
never read: they may hold anything. d is a multiple of 4 (float4 loads) up to 128.

The step is memory-bound: each (b, h) reads 2 length d floats (its keys and
values) and does 4 length d flops with them, so DRAM bandwidth, as the copy kernel
measures it, is the ceiling. v1 gives each (b, h) one warp; v2 splits the keys of
each (b, h) over several blocks (Flash-Decoding) so that a few sequences still fill
the GPU, and merges their partial softmax states.

A family's size is (B, H, Tmax, d, length), and make_inputs returns (q, k_cache,
v_cache, length) with length an np.int32 and the rows from `length` on filled with
NaN, so a kernel that reads one of them fails its check.

python -m thousand.kernels.attention_decode
"""

from __future__ import annotations

import math

import numpy as np

from thousand.cuda import (
    Staging,
    backend,
    cdiv,
    check_aligned,
    check_array,
    check_block,
    check_shape,
    launch,
    to_device,
)
from thousand.kernels.family import Family, Version
from thousand.kernels.kv_append import check_int
from thousand.kernels.layer_launch import scratch

OP = "attention_decode"
MAX_D = 128
LOG2E = 1.4426950408889634
KEYS_PER_LANE = 8  # U in attention_decode.cu: key rows a lane loads per step
# v2's chunks: enough blocks for about 8 per SM of a 132-SM GPU (H100, H200), each
# of at least 64 keys. Constants, not the device's count, so that every GPU (and
# the CPU backend) merges in the same order and gets the same bits.
SMS, BLOCKS_PER_SM, MIN_CHUNK = 132, 8, 64


# --8<-- [start:ref]
def attention_decode_ref(q, k_cache, v_cache, length) -> np.ndarray:
    """o (B, H, 1, d): softmax(q k^T / sqrt(d)) v over the first `length` rows of
    the caches, in float64, rounded once to float32."""
    n = int(length)
    q = np.asarray(q, np.float64)
    k = np.asarray(k_cache[:, :, :n], np.float64)
    v = np.asarray(v_cache[:, :, :n], np.float64)
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])  # (B, H, 1, length)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True) @ v).astype(np.float32)


# --8<-- [end:ref]


def group_lanes(d: int) -> int:
    """G, the lanes that share a key row: d / 4 rounded up to a power of two."""
    g = 1
    while 4 * g < d:
        g *= 2
    return g


def plan_v2(heads: int, length: int, d: int) -> tuple[int, int]:
    """v2's split of each head's keys: (chunks, keys per chunk). About SMS x
    BLOCKS_PER_SM blocks in all, at least MIN_CHUNK keys per chunk, a chunk a whole
    number of a warp's steps (32 / G x KEYS_PER_LANE keys); no chunk is empty."""
    step = 32 // group_lanes(d) * KEYS_PER_LANE
    chunks = min(max(1, cdiv(SMS * BLOCKS_PER_SM, heads)), cdiv(length, MIN_CHUNK))
    chunk = cdiv(cdiv(length, chunks), step) * step
    return cdiv(length, chunk), chunk


def check_inputs(q, k_cache, v_cache, length, out) -> tuple:
    """Every check before anything moves. Returns (B, H, Tmax, d, length)."""
    names = ("q", "k_cache", "v_cache")
    for name, a in zip(names, (q, k_cache, v_cache), strict=True):
        check_array(OP, name, a, ndim=4)
    B, H, T, d = k_cache.shape
    check_shape(OP, "v_cache", v_cache, (B, H, T, d))
    check_shape(OP, "q", q, (B, H, 1, d))
    if d % 4 or not 4 <= d <= MAX_D:
        raise ValueError(
            f"{OP}: the head dimension d (the last axis) must be a multiple of 4 "
            f"from 4 to {MAX_D} (float4 loads), got {d}"
        )
    length = check_int(OP, "length", length, "how many cache rows hold keys")
    if not 1 <= length <= T:
        raise ValueError(
            f"{OP}: `length` must be from 1 to the cache's Tmax = {T} (the new "
            f"token's own key is in the cache), got {length}"
        )
    if max(B, H) > 65535:  # v2's grid y and z
        raise ValueError(f"{OP}: B and H must be at most 65,535, got {B} and {H}")
    for name, a in zip(names, (q, k_cache, v_cache), strict=True):
        check_aligned(OP, name, a, 16)
    if out is not None:
        check_array(OP, "out", out, ndim=4)
        check_shape(OP, "out", out, (B, H, 1, d))
        check_aligned(OP, "out", out, 16)
    return B, H, T, d, length


def warps_of(name: str, block) -> int:
    (block,) = check_block(OP, block, ndim=1)
    if block % 32:
        raise ValueError(
            f"{OP}: {name} works in whole warps: `block` must be a multiple of 32, "
            f"got {block}"
        )
    return block // 32


def _stage(q, k_cache, v_cache, length, out):
    B, H, T, d, length = check_inputs(q, k_cache, v_cache, length, out)
    stage = Staging(OP, q, k_cache, v_cache, names=("q", "k_cache", "v_cache"))
    d_in = stage.inputs()
    d_out = stage.output(out, (B, H, 1, d))
    c2 = np.float32(LOG2E / math.sqrt(d))  # scores in base 2: exp2f
    return stage, d_in, d_out, (B, H, T, d, length), c2


_COUNTS: dict = {}  # backend -> v2's counters, one per head, zero between launches


def _counters(heads: int):
    have = _COUNTS.get(backend())
    if have is None or have.shape[0] < heads:
        have = _COUNTS[backend()] = to_device(np.zeros(heads, np.uint32))
    return have[:heads]


# --8<-- [start:launchers]
def attention_decode_v1(q, k_cache, v_cache, length, out=None, block=32):
    """One warp per (b, h), block / 32 heads per block."""
    warps = warps_of("attention_decode_v1", block)
    stage, d_in, d_out, (B, H, T, d, n), c2 = _stage(q, k_cache, v_cache, length, out)
    if B * H:
        ints = (np.int32(B * H), np.int32(T), np.int32(d), np.int32(n))
        grid = (cdiv(B * H, warps),)
        launch(OP, "attention_decode_v1", grid, (block,), *d_in, d_out, *ints, c2)
    return stage.result(d_out, out)


def attention_decode_v2(q, k_cache, v_cache, length, out=None, block=128):
    """Flash-Decoding: grid (chunks, H, B) (plan_v2), the last block of each head
    merges the chunks' states."""
    warps = warps_of("attention_decode_v2", block)
    stage, d_in, d_out, (B, H, T, d, n), c2 = _stage(q, k_cache, v_cache, length, out)
    if B * H:
        chunks, chunk = plan_v2(B * H, n, d)
        slots = B * H * chunks if chunks > 1 else 0
        part = scratch(OP, "chunk states", (max(slots * (d + 2), 1),))
        count = _counters(B * H)
        ints = (np.int32(H), np.int32(T), np.int32(d), np.int32(n), np.int32(chunk))
        try:
            launch(
                OP,
                "attention_decode_v2",
                (chunks, H, B),
                (block,),
                *d_in,
                d_out,
                part,
                count,
                *ints,
                c2,
                shared=4 * warps * (4 * 32 + 2),
            )
        except Exception:
            _COUNTS.pop(backend(), None)  # a launch that broke may leave counts
            raise
    return stage.result(d_out, out)


# --8<-- [end:launchers]


# --8<-- [start:front-door]
def attention_decode(q, k_cache, v_cache, length, out=None, version=2, block=None):
    """softmax(q k[:length]^T / sqrt(d)) v[:length] for q (B, H, 1, d) and caches
    (B, H, Tmax, d), float32. Returns o (B, H, 1, d) (in `out` when given)."""
    ver = FAMILY.version(version)
    block = ver.default_block if block is None else block
    return ver.run(q, k_cache, v_cache, length, out=out, block=block)


# --8<-- [end:front-door]


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    """q, k_cache, v_cache of N(0, 1) for size (B, H, Tmax, d, length), the cache
    rows from `length` on NaN (a kernel that reads one fails), and length."""
    B, H, T, d, length = size
    q = rng.standard_normal((B, H, 1, d), dtype=np.float32)
    k, v = (rng.standard_normal((B, H, T, d), dtype=np.float32) for _ in range(2))
    k[:, :, length:] = np.nan
    v[:, :, length:] = np.nan
    return q, k, v, np.int32(length)


# (B, H, Tmax, d, length): one key; length 1 of a longer cache; odd B and H; the
# full cache; d = 12 and 48 (group lanes past d / 4 idle); lengths off every step and
# chunk (v2 merges chunks from 65 keys on); d from 4 to 128. The CPU layer runs the
# sizes whose product is at most 2^17 (tests/cpu/test_kv_cache.py runs larger
# ones); the GPU's: a 1,024-token cache, one sequence (v2's case) and 32 (the
# benchmark's), and a 4,096-token one at d = 128.
CHECK_SIZES = (
    (1, 1, 1, 4, 1),
    (1, 1, 8, 8, 1),
    (3, 5, 10, 8, 7),
    (1, 2, 40, 32, 40),
    (1, 1, 100, 12, 67),
    (2, 3, 16, 48, 16),
    (1, 1, 33, 128, 31),
    (2, 3, 1000, 64, 777),
    (1, 12, 1024, 64, 1024),
    (3, 5, 2048, 16, 1531),
    (4, 4, 4096, 128, 4095),
    (32, 12, 1024, 64, 1024),
)
# GPT-2 small decoding 32 sequences with the 1,024-token cache full: 201 MB of
# keys and values per step (100.7 MB each), over three times an H200's 60 MiB L2.
BENCH_SIZE = (32, 12, 1024, 64, 1024)


def bytes_moved(size: tuple) -> int:
    """Keys and values of `length` rows read, q read and o written, per (b, h)."""
    B, H, _, d, length = size
    return 4 * B * H * d * (2 * length + 2)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "attention_decode_v1",
            "a warp per (b, h): float4 lane groups per key row, online softmax",
            attention_decode_v1,
            blocks=(32, 128, 256),
            default_block=32,  # B H = 384 heads: 384 blocks, 2 or 3 per SM
        ),
        Version(
            2,
            "attention_decode_v2",
            "Flash-Decoding: a head's keys over many blocks, the last one merges",
            attention_decode_v2,
            blocks=(64, 128, 256),
            default_block=128,
        ),
    ),
    ref=attention_decode_ref,
    make_inputs=make_inputs,
    check_sizes=CHECK_SIZES,
    bench_size=BENCH_SIZE,
    bytes_moved=bytes_moved,
    # |o| is at most a few units (a weighted mean of rows of v). float32 dot
    # products over d, exp2f, and sums over `length` keys in another order than the
    # float64 reference: at most 4.1e-7 measured on the CPU backend (both
    # versions, every check size and block, several seeds). The GPU's exp2f is
    # within 2 ulp where glibc's is within 1, and it fuses other multiply-adds:
    # 2e-6, attention's bound, leaves room for that.
    tolerance=2e-6,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
