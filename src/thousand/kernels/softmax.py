"""Softmax over the rows of a matrix: the first kernels of the Transformer half.

    y = softmax(x)                 # x: (rows, cols) float32, C order; v4
    softmax(x, out=x)              # in place: each element is read before it is written

Every version subtracts the row's max before exponentiating, so logits of any size
(1e30) give the right answer. A row with no finite max (all -inf, or holding +inf or
NaN) comes out NaN, as exp(x - max) / sum does in NumPy and in torch.softmax; -inf
next to finite values comes out 0 (a masked position).

python -m thousand.kernels.softmax
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version

OP = "softmax"
HELD = 16  # floats per thread that softmax_v4 keeps in registers (HELD in the .cu)


# --8<-- [start:ref]
def softmax_ref(x: np.ndarray) -> np.ndarray:
    """Each row's softmax in float64, rounded once to float32. NaN for a row with no
    finite max, as the formula gives (NumPy warns of nothing: we asked for it)."""
    x64 = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):  # -inf - -inf and inf - inf: NaN, as meant
        e = np.exp(x64 - x64.max(axis=1, keepdims=True, initial=-np.inf))
        return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


# --8<-- [end:ref]


def _run(name, x, out, block, rows_per_block):
    check_array(OP, "x", x, ndim=2)
    rows, cols = x.shape
    if out is not None:
        check_array(OP, "out", out, ndim=2)
        check_shape(OP, "out", out, (rows, cols))
    (block,) = check_block(OP, block, ndim=1)  # an int before any arithmetic
    if block % 32:
        raise ValueError(f"{OP}: {name} needs whole warps, got a block of {block}")
    stage = Staging(OP, x, names=("x",))
    (dx,) = stage.inputs()
    # Each thread reads the elements it writes before writing them, and every read
    # of the row for its max and sum ends at a barrier (v3: the warp's shuffles)
    # before any write: out may be x itself, though no other overlap.
    d_out = stage.output(out, (rows, cols), in_place_ok=True)
    if rows and cols:
        grid = (cdiv(rows, rows_per_block(block)),)
        launch(OP, name, grid, (block,), dx, d_out, np.int32(rows), np.int32(cols))
    return stage.result(d_out, out)


def _one_row(block):
    return 1  # one block per row, whatever its size


# --8<-- [start:launchers]
def softmax_v1(x, out=None, block=256):
    """One block per row, three passes: max, sum of exponentials, outputs."""
    return _run("softmax_v1", x, out, block, _one_row)


def softmax_v2(x, out=None, block=256):
    """One block per row, online max and sum in one pass, then the outputs."""
    return _run("softmax_v2", x, out, block, _one_row)


def softmax_v3(x, out=None, block=256):
    """One warp per row, block // 32 rows per block: for rows of up to ~1,024."""
    return _run("softmax_v3", x, out, block, lambda b: b // 32)


def softmax_v4(x, out=None, block=256):
    """One block per row held in registers, 16 floats a thread: a row of up to
    16 * block columns is read once (block=256: 4,096). Longer rows are right too,
    but the columns past 16 * block are read twice."""
    return _run("softmax_v4", x, out, block, _one_row)


# --8<-- [end:launchers]


def softmax(x, out=None, version=4, block=None):
    """The softmax of every row of the (rows, cols) float32 matrix x. `block`:
    threads per block; by default the version's own, and for v4 the fewest whole
    warps whose registers hold the row (4,096 columns: 256 threads), at most 1,024."""
    v = FAMILY.version(version)
    if block is None and v.number == 4 and hasattr(x, "shape") and len(x.shape) == 2:
        block = min(1024, 32 * max(1, cdiv(x.shape[1], 32 * HELD)))
    return v.run(x, out=out, block=v.default_block if block is None else block)


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    rows, cols = size
    # Logits up to ~150: exp overflows float32 past 88, so without the max
    # subtracted the kernels would return inf / inf = NaN.
    return ((rng.standard_normal((rows, cols)) * 30).astype(np.float32),)


def typical_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    """What the benchmark times: logits a few units wide, as a model produces. The
    checks' +-170 sends most exp(x - max) below float32's normal range, and
    torch.softmax runs 2.4x slower on such denormal-heavy rows on an H200: a
    yardstick slowed by data no workload has."""
    rows, cols = size
    return ((rng.standard_normal((rows, cols)) * 3).astype(np.float32),)


BLOCKS = (32, 256, 1024)
FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "softmax_v1",
            "three passes, one block per row: max, sum of exp, normalise",
            softmax_v1,
            blocks=BLOCKS,
        ),
        Version(
            2,
            "softmax_v2",
            "online softmax: max and sum in one pass, rescaled as the max grows",
            softmax_v2,
            blocks=BLOCKS,
        ),
        Version(
            3,
            "softmax_v3",
            "one warp per row: shuffles only, no shared memory, no barrier",
            softmax_v3,
            blocks=BLOCKS,
        ),
        Version(
            4,
            "softmax_v4",
            "the row in registers: one read, one write, a copy's traffic",
            softmax_v4,
            # 64 threads hold 1,024 columns, so most sizes also run the long-row tail
            blocks=(64, 256, 1024),
            default_block=256,
        ),
    ),
    ref=softmax_ref,
    make_inputs=make_inputs,
    typical_inputs=typical_inputs,
    # (rows, cols): one element; rows shorter than a warp; odd, prime and ragged
    # widths (scalar loads in v4) and multiples of 4 (float4); rows just past what a
    # block holds (4,097 = 256 * 16 + 1); many short rows (v3's last block part
    # full). The last is the size `python -m` times on the CPU backend.
    check_sizes=(
        (1, 1),
        (1, 5),
        (7, 33),
        (129, 7),
        (3, 1000),
        (37, 250),
        (33, 1025),
        (2, 4097),
        (9, 8191),
        (9, 8192),
        (1, 65537),
        (1000, 131),
        (5, 4096),
    ),
    # Attention scores of a long context: 32,768 rows of 4,096, 512 MiB each way
    bench_size=(32768, 4096),
    bytes_moved=lambda size: 2 * 4 * size[0] * size[1],  # read x once, write y once
    # Outputs lie in [0, 1], so this is an absolute error: expf's error on the
    # largest outputs, plus the float32 sum of exponentials (each thread's share in
    # order, then a tree). At most 1.8e-7 (1.5 ulp of 1) on the CPU backend, every
    # version, size and block, several seeds; the GPU's expf is within 2 ulp where
    # glibc's is within 1, and it fuses multiply-adds: 1e-6 leaves that margin.
    tolerance=1e-6,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
