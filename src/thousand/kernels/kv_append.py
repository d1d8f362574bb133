"""The key-value cache of generation: the keys (or values) of n new tokens written
into rows pos .. pos + n - 1 of every (b, h) of a (B, H, Tmax, d) cache.

    k_cache = empty((B, H, Tmax, d))             # one per layer, kept on the device
    kv_append(k_cache, k_new, pos, out=k_cache)  # in place, as a model calls it
    grown = kv_append(k_cache, k_new, pos)       # a new array: the cache, rows replaced

A GPT generating text computes at each step the keys and values of the new tokens
only, (B, H, n, d) (n = 1 while decoding, the prompt's length once to fill the
cache), appends them, and attends over rows 0 .. pos + n - 1 (attention_decode). In
place, only the n new rows of each (b, h) move, read once from `new` and written
once: nothing else of the cache is read or written. out=None, or an `out` of its
own, gets the whole cache with the rows replaced, copied in the same pass.

`pos` is an int (a Python or NumPy integer, not a bool) with 0 <= pos and pos + n
<= Tmax. `out` may be the cache itself (the very array) and must not overlap `new`.
NumPy arrays are staged whole: kv_append(cache, new, pos, out=cache) on the host
copies the cache to the device and back. Keep the cache on the device, as a model
does, for the in-place call to move only the new rows.

A family's size is (B, H, Tmax, d, n, pos); make_inputs returns (cache, new, pos)
with pos an np.int32. bytes_moved counts the in-place append (n rows read, n rows
written); the NumPy and PyTorch baselines append in place, and so does the
benchmark (the Version's timed_out=0 passes the cache as `out`). At the decode
step (BENCH_SIZE) the
append moves 197 KB, some 40 ns of an H200's DRAM: its time is the launch's, a
few microseconds, for this kernel and the baselines alike.

python -m thousand.kernels.kv_append
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import (
    Staging,
    check_array,
    check_block,
    check_no_overlap,
    check_shape,
    device_address,
    grid_stride_blocks,
    is_device_array,
    launch,
)
from thousand.kernels.family import Family, Version, pick

OP = "kv_append"


# --8<-- [start:ref]
def kv_append_ref(cache: np.ndarray, new: np.ndarray, pos) -> np.ndarray:
    """A copy of cache (B, H, Tmax, d) with rows pos .. pos + n - 1 of every (b, h)
    replaced by new (B, H, n, d)."""
    out = np.array(cache, dtype=np.float32, copy=True)
    out[:, :, int(pos) : int(pos) + new.shape[2]] = new
    return out


# --8<-- [end:ref]


def check_int(op: str, name: str, value, meaning: str) -> int:
    """`value` as a Python int: a Python or NumPy integer, never a bool (True is
    not a position) nor a float (a whole 3.0 is still refused, as `version` is)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise ValueError(
            f"{op}: `{name}` must be an int ({meaning}), got {value!r} "
            f"({type(value).__name__})"
        )
    return int(value)


def _same_array(a, b) -> bool:
    """a and b are one array: the same kind, start and shape (both C-contiguous
    float32, checked before)."""
    if is_device_array(a) != is_device_array(b) or tuple(a.shape) != tuple(b.shape):
        return False
    if not a.size:
        return a is b
    if is_device_array(a):
        return device_address(a) == device_address(b)
    return a.__array_interface__["data"][0] == b.__array_interface__["data"][0]


def _aligned16(*arrays) -> bool:
    return all(not a.size or device_address(a) % 16 == 0 for a in arrays)


def check_inputs(cache, new, pos, out) -> tuple:
    """The checks, before anything moves: (B, H, Tmax, d, n, pos)."""
    check_array(OP, "cache", cache, ndim=4)
    check_array(OP, "new", new, ndim=4)
    B, H, T, d = cache.shape
    n = new.shape[2]
    check_shape(OP, "new", new, (B, H, n, d))
    pos = check_int(OP, "pos", pos, "the cache row the first new row goes to")
    if pos < 0 or pos + n > T:
        raise ValueError(
            f"{OP}: `pos` must place the {n} new rows within the cache's {T}: "
            f"0 <= pos and pos + n <= Tmax, got pos = {pos} (rows {pos} .. "
            f"{pos + n - 1})"
        )
    if out is not None:
        check_array(OP, "out", out, ndim=4)
        check_shape(OP, "out", out, (B, H, T, d))
    return B, H, T, d, n, pos


# --8<-- [start:launchers]
def kv_append_v1(cache, new, pos, out=None, block=256):
    """Rows pos .. pos + n - 1 of every (b, h) from `new`. With out=cache only
    those rows are written; otherwise `out` (or a new array) gets all of them."""
    B, H, T, d, n, pos = check_inputs(cache, new, pos, out)
    (block,) = check_block(OP, block, ndim=1)
    stage = Staging(OP, cache, new, names=("cache", "new"))
    in_place = out is not None and _same_array(out, cache)
    if in_place:  # the cache itself: `new` may not be part of it
        check_no_overlap(OP, out, {"new": new})
    d_cache, d_new = stage.inputs()
    d_out = d_cache if in_place else stage.output(out, (B, H, T, d))
    row0, rows = (pos, n) if in_place else (0, T)
    vec = d % 4 == 0 and _aligned16(d_cache, d_new, d_out)
    items = B * H * rows * (d // 4 if vec else d)
    if items:
        ints = (B * H, T, d, pos, n, row0, rows, vec)
        grid = (grid_stride_blocks(block, items),)
        args = (d_cache, d_new, d_out, *(np.int32(i) for i in ints))
        launch(OP, "kv_append_v1", grid, (block,), *args)
    return stage.result(d_out, out)


# --8<-- [end:launchers]


# --8<-- [start:front-door]
def kv_append(cache, new, pos, out=None, version=1, block=256):
    """cache (B, H, Tmax, d) with rows pos .. pos + n - 1 of every (b, h) replaced
    by new (B, H, n, d), float32. out=cache appends in place (only those rows are
    written); otherwise returns a new array (in `out` when given)."""
    return pick(FAMILY, version)(cache, new, pos, out=out, block=block)


# --8<-- [end:front-door]


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    """(cache, new, pos) for size (B, H, Tmax, d, n, pos): a cache of N(0, 1) (every
    row differs, so a row written to the wrong place shows) and new rows of N(5, 1)."""
    B, H, T, d, n, pos = size
    cache = rng.standard_normal((B, H, T, d), dtype=np.float32)
    new = 5 + rng.standard_normal((B, H, n, d), dtype=np.float32)
    return cache, new, np.int32(pos)


# (B, H, Tmax, d, n, pos): a cache of one row; d = 1 and 6 (scalar moves) and 4 and
# up (float4); the first row and the last; several rows at once (a prompt filling
# the cache, 37 rows from row 0); odd B and H; n = 0 (nothing to write). The CPU
# layer runs the sizes whose product is at most 2^17 (pos = 0 counts as 1); the last
# is the benchmark's decode step.
CHECK_SIZES = (
    (1, 1, 1, 4, 1, 0),
    (1, 1, 5, 1, 1, 4),
    (2, 3, 7, 6, 2, 5),
    (3, 2, 17, 8, 1, 0),
    (1, 2, 6, 4, 0, 3),
    (2, 5, 33, 12, 4, 13),
    (1, 3, 64, 16, 37, 0),
    (3, 4, 100, 128, 1, 99),
    (2, 12, 1024, 64, 1, 517),
    (32, 12, 1024, 64, 1, 512),
)
# GPT-2 small's decode step for 32 sequences: 12 heads of 64, a 1,024-token cache,
# one new row per (b, h) halfway through it.
BENCH_SIZE = (32, 12, 1024, 64, 1, 512)


def bytes_moved(size: tuple) -> int:
    """The in-place append: n rows of d floats per (b, h), read once, written once."""
    B, H, _, d, n, _ = size
    return 2 * 4 * B * H * n * d


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "kv_append_v1",
            "in place only the n new rows move; float4 when d % 4 == 0",
            kv_append_v1,
            blocks=(64, 256, 1024),
            timed_out=0,  # the benchmark appends into the cache, as generate does
        ),
    ),
    ref=kv_append_ref,
    make_inputs=make_inputs,
    check_sizes=CHECK_SIZES,
    bench_size=BENCH_SIZE,
    bytes_moved=bytes_moved,
    tolerance=0.0,  # a copy: every float arrives unchanged
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
