"""Cross-entropy over a large vocabulary, fused with its softmax: the loss of a
language model.

    loss = cross_entropy(logits, targets)     # logits (N, V) float32, targets (N,)
    lse = np.empty(N, np.float32)             # int32; N = B * T rows
    loss = cross_entropy(logits, targets, lse=lse)   # what the backward takes
    mean_loss = loss.mean()                   # the caller reduces: (N,) per-row losses

loss[r] = logsumexp(logits[r]) - logits[r, targets[r]], each row read once; no
softmax or log-softmax is written out (PyTorch's cross_entropy writes the (N, V)
log-softmax first, then picks from it). `lse`, the row's log-sum-exp, is all that
cross_entropy_backward needs of the forward.

Targets: host arrays are checked, and a target outside [0, V) raises ValueError.
Device arrays are not copied back to the host to be checked (that would stall every
call); there a bad target makes its row's loss NaN, and nothing outside the row is
read.

python -m thousand.kernels.cross_entropy
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick
from thousand.kernels.layer_launch import scratch

OP = "cross_entropy"
GPT2_VOCAB = 50257


# --8<-- [start:ref]
def cross_entropy_parts(logits: np.ndarray, targets: np.ndarray):
    """Each row's loss and log-sum-exp in float64 (targets in [0, V))."""
    x = logits.astype(np.float64)  # (N, V)
    m = x.max(axis=1, keepdims=True, initial=-np.inf)  # (N, 1)
    with np.errstate(invalid="ignore", divide="ignore"):  # NaN rows stay NaN
        lse = (m + np.log(np.exp(x - m).sum(axis=1, keepdims=True)))[:, 0]
    picked = x[np.arange(x.shape[0]), np.asarray(targets, dtype=np.int64)]
    return lse - picked, lse


def cross_entropy_ref(logits: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """The per-row losses (N,), rounded once to float32."""
    return cross_entropy_parts(logits, targets)[0].astype(np.float32)


# --8<-- [end:ref]


def check_targets(op: str, targets, V: int) -> None:
    """Host targets must index a column; device ones are left to the kernel."""
    if isinstance(targets, np.ndarray) and targets.size:
        low, high = int(targets.min()), int(targets.max())
        if low < 0 or high >= V:
            bad = low if low < 0 else high
            raise ValueError(
                f"{op}: `targets` must lie in [0, V) = [0, {V}), got {bad} "
                f"(at index {int(np.flatnonzero(targets == bad)[0])})"
            )


def _run(name, logits, targets, out, block, lse):
    check_array(OP, "logits", logits, ndim=2)  # (N, V)
    N, V = logits.shape
    check_array(OP, "targets", targets, ndim=1, dtype=np.int32)  # (N,)
    check_shape(OP, "targets", targets, (N,))
    for arg, a in (("out", out), ("lse", lse)):
        if a is not None:
            check_array(OP, arg, a, ndim=1)
            check_shape(OP, arg, a, (N,))
    (block,) = check_block(OP, block, ndim=1)
    if block % 32:
        raise ValueError(f"{OP}: {name} needs whole warps, got a block of {block}")
    if N and not V:
        raise ValueError(f"{OP}: `logits` has rows of no classes (V = 0)")
    check_targets(OP, targets, V)
    stage = Staging(OP, logits, targets, names=("logits", "targets"))
    d_logits, d_targets = stage.inputs()
    d_loss = stage.output(out, (N,))
    stage.named["out"] = out  # lse may overlap neither the loss nor an input
    # not wanted: lse goes into a buffer kept between calls
    d_lse = (
        scratch(OP, "lse", (N,)) if lse is None else stage.output(lse, (N,), name="lse")
    )
    if N:
        args = (d_logits, d_targets, d_loss, d_lse, np.int32(N), np.int32(V))
        launch(OP, name, (N,), (block,), *args)  # one block per row
    if lse is not None and stage.on_host:
        d_lse.get(ary=lse)
    return stage.result(d_loss, out)


# --8<-- [start:launchers]
def cross_entropy_v1(logits, targets, out=None, block=256, lse=None):
    """One block per row, online max and sum: two expf per element."""
    return _run("cross_entropy_v1", logits, targets, out, block, lse)


def cross_entropy_v2(logits, targets, out=None, block=256, lse=None):
    """One block per row, 16 columns a thread at a time: one expf per element."""
    return _run("cross_entropy_v2", logits, targets, out, block, lse)


def cross_entropy_v3(logits, targets, out=None, block=256, lse=None):
    """v2 over float4 loads: each row cut into a head, an aligned body, a tail."""
    return _run("cross_entropy_v3", logits, targets, out, block, lse)


# --8<-- [end:launchers]


def cross_entropy(logits, targets, out=None, version=3, block=256, lse=None):
    """The loss of each row of the (N, V) float32 `logits` against its int32 class
    in `targets` (N,): logsumexp(row) - row[target], (N,) float32 (in `out` when
    given). Writes each row's log-sum-exp into `lse` when given (an (N,) array of
    the same kind as the logits), which cross_entropy_backward takes."""
    return pick(FAMILY, version)(logits, targets, out=out, block=block, lse=lse)


def awkward_logits(rng: np.random.Generator, size: tuple, shift: float) -> tuple:
    """Rows from nearly flat to sharp (logits of N(0, 1) to N(0, 30^2)), every
    third row moved by `shift`; about 5% of classes masked to -inf, never a target
    (its loss would be +inf), and in the second row every class but the target
    (loss 0); the first row's target is column 0, the last's V - 1."""
    N, V = size
    scale = rng.uniform(1, 30, (N, 1))
    x = rng.standard_normal((N, V)) * scale
    x[2::3] += shift
    targets = rng.integers(0, V, N).astype(np.int32)
    targets[0], targets[-1] = 0, V - 1
    masked = rng.random((N, V)) < 0.05
    masked[np.arange(N), targets] = False
    x[masked] = -np.inf
    if N > 1:
        x[1, np.arange(V) != targets[1]] = -np.inf
    return x.astype(np.float32), targets


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    # rows moved by 1e4, where exp overflows unless the max is subtracted
    return awkward_logits(rng, size, shift=1e4)


def typical_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    """What the benchmark times: logits a few units wide, as a language model's
    are, no masks. make_inputs' rows of N(0, 30^2) send most e^(x - m) below
    float32's normal range, which slows some library kernels (softmax.py)."""
    N, V = size
    x = (rng.standard_normal((N, V)) * 3).astype(np.float32)
    return x, rng.integers(0, V, N).astype(np.int32)


BLOCKS = (32, 256, 1024)
FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "cross_entropy_v1",
            "online softmax per row: one read, two expf per element",
            cross_entropy_v1,
            blocks=BLOCKS,
        ),
        Version(
            2,
            "cross_entropy_v2",
            "16 columns a thread at a time: their max, then 16 independent expf",
            cross_entropy_v2,
            blocks=BLOCKS,
        ),
        Version(
            3,
            "cross_entropy_v3",
            "float4 loads on misaligned rows: a scalar head and tail per row",
            cross_entropy_v3,
            blocks=BLOCKS,
        ),
    ),
    ref=cross_entropy_ref,
    make_inputs=make_inputs,
    typical_inputs=typical_inputs,
    # (N, V): one class (loss 0), two, primes and odd widths (every row on another
    # 16-byte offset: v3's heads and tails), rows shorter than a warp, widths past
    # what one pass of 16 x 1,024 columns covers, GPT-2's vocabulary with few rows
    # (two run on the CPU backend, 64 on the GPU), many narrow rows. The last is
    # the size `python -m` times on the CPU backend.
    check_sizes=(
        (1, 1),
        (5, 1),
        (3, 2),
        (7, 3),
        (5, 31),
        (4, 33),
        (9, 1021),
        (3, 4099),
        (2, 16411),
        (2, GPT2_VOCAB),
        (64, GPT2_VOCAB),
        (1000, 7),
        (16, 1024),
    ),
    # GPT-2 small's classifier: B * T = 8 * 1024 rows of its 50,257 classes
    bench_size=(8192, GPT2_VOCAB),
    # read the logits once and the targets; write the loss and lse of each row
    bytes_moved=lambda size: 4 * (size[0] * size[1] + 3 * size[0]),
    # relative to the largest loss (up to ~200 at 30-unit logits, at least 1):
    # expf and logf, a float32 sum of up to 50,257 terms in another order than
    # float64's, and m - x[t] rounded: at most 1.2e-7 measured on the CPU backend
    # (every version, size and block, six seeds), whose expf is within 1 ulp; the
    # GPU's is within 2 and it fuses multiply-adds: 1e-6 leaves that margin.
    tolerance=1e-6,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
