"""The backward pass of cross_entropy: the gradient of the loss with respect to the
logits, from the log-sum-exp the forward saved.

    lse = np.empty(N, np.float32)
    loss = cross_entropy(logits, targets, lse=lse)            # (N,)
    dloss = np.full(N, 1 / N, np.float32)                     # d(mean loss)/d(loss)
    dlogits = cross_entropy_backward(logits, targets, lse, dloss)          # (N, V)
    cross_entropy_backward(logits, targets, lse, dloss, out=logits)  # in place

dlogits[r] = (softmax(logits[r]) - onehot(targets[r])) * dloss[r], the softmax
taken as exp(logits - lse): one read of the logits and one write, a copy's traffic.
`out=logits` overwrites the logits with their gradient, as llm.c's fused classifier
does: the logits are not needed after it. With the lse saved instead of a softmax,
that is 2 * N * V * 4 bytes less memory than PyTorch's cross_entropy, which keeps
the (N, V) log-softmax for its backward and writes a separate (N, V) gradient:
3.3 GB at GPT-2's N = 8,192 and V = 50,257.

Accuracy: the saved lse is a float32, so for a row whose logits are near L it is
off by up to L * 2^-24 (half an ulp), and every probability of the row by that
factor: 6e-7 at logits of 10, 6e-4 at 1e4. PyTorch saves the log-softmax itself,
whose large entries are near 0 and keep their digits; logits of 1e4 are a stress
test, not a model's output.

Targets outside [0, V) raise ValueError for host arrays; on the device their row
comes out NaN (cross_entropy.py says why they are not checked there).

python -m thousand.kernels.cross_entropy_backward
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, check_array, check_block, check_shape, launch
from thousand.kernels.cross_entropy import (
    awkward_logits,
    check_targets,
    cross_entropy_parts,
)
from thousand.kernels.cross_entropy import typical_inputs as typical_forward
from thousand.kernels.family import Family, Version, pick

OP = "cross_entropy_backward"


# --8<-- [start:ref]
def cross_entropy_backward_ref(logits, targets, lse, dloss) -> np.ndarray:
    """dlogits in float64 from the lse given (the forward's float32), rounded once
    to float32."""
    x = logits.astype(np.float64)  # (N, V)
    p = np.exp(x - np.asarray(lse, np.float64)[:, None])  # softmax, from the lse
    p[np.arange(x.shape[0]), np.asarray(targets, dtype=np.int64)] -= 1.0
    return (p * np.asarray(dloss, np.float64)[:, None]).astype(np.float32)


# --8<-- [end:ref]


# --8<-- [start:launchers]
def cross_entropy_backward_v1(logits, targets, lse, dloss, out=None, block=256):
    """One block per row: float4 over each row's aligned body, scalars at its
    ends. `out` may be `logits` itself (in place)."""
    check_array(OP, "logits", logits, ndim=2)  # (N, V)
    N, V = logits.shape
    check_array(OP, "targets", targets, ndim=1, dtype=np.int32)  # (N,)
    check_shape(OP, "targets", targets, (N,))
    for arg, a in (("lse", lse), ("dloss", dloss)):
        check_array(OP, arg, a, ndim=1)
        check_shape(OP, arg, a, (N,))
    if out is not None:
        check_array(OP, "out", out, ndim=2)
        check_shape(OP, "out", out, (N, V))
    check_block(OP, block, ndim=1)
    check_targets(OP, targets, V)
    names = ("logits", "targets", "lse", "dloss")
    stage = Staging(OP, logits, targets, lse, dloss, names=names)
    d_in = stage.inputs()
    # Each element of the logits is read by the thread that writes its gradient,
    # before it writes it: out may be the logits, though no other overlap.
    d_out = stage.output(out, (N, V), in_place_ok=True)
    if N and V:
        args = (*d_in, d_out, np.int32(N), np.int32(V))
        launch(OP, "cross_entropy_backward_v1", (N,), (block,), *args)
    return stage.result(d_out, out)


# --8<-- [end:launchers]


def cross_entropy_backward(logits, targets, lse, dloss, out=None, version=1, block=256):
    """The (N, V) gradient of the per-row losses cross_entropy(logits, targets)
    for upstream gradients `dloss` (N,), given the `lse` the forward wrote. `out`
    may be `logits` itself: the gradient then overwrites them."""
    run = pick(FAMILY, version)
    return run(logits, targets, lse, dloss, out=out, block=block)


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    """The forward's awkward logits (-inf masks, rows up to 30 units wide), the
    lse it writes, and upstream gradients of either sign and several scales (a
    weighted loss). Rows are not moved by 1e4 as the forward's are: there the
    float32 lse, not the kernel, limits the gradient (the module's note), and the
    check against PyTorch, which saves the log-softmax instead, would measure
    that; tests/cpu/test_cross_entropy.py runs such rows through the kernel."""
    logits, targets = awkward_logits(rng, size, shift=0.0)
    lse = cross_entropy_parts(logits, targets)[1].astype(np.float32)
    dloss = (rng.standard_normal(size[0]) * rng.uniform(0, 2, size[0])).astype(
        np.float32
    )
    return logits, targets, lse, dloss


def typical_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    """What the benchmark times: the forward's typical logits, and the mean loss's
    upstream gradient, 1/N for every row."""
    logits, targets = typical_forward(rng, size)
    lse = cross_entropy_parts(logits, targets)[1].astype(np.float32)
    return logits, targets, lse, np.full(size[0], 1 / size[0], np.float32)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "cross_entropy_backward_v1",
            "exp(x - lse) - onehot: float4 body and scalar ends per row, in place",
            cross_entropy_backward_v1,
            blocks=(32, 256, 1024),
        ),
    ),
    ref=cross_entropy_backward_ref,
    make_inputs=make_inputs,
    typical_inputs=typical_inputs,
    # (N, V): as the forward's: V of 1 and 2, primes and odd widths (the float4
    # body starts 0 to 3 floats into each row), GPT-2's vocabulary with few rows
    check_sizes=(
        (1, 1),
        (5, 1),
        (3, 2),
        (7, 3),
        (5, 31),
        (4, 33),
        (9, 1021),
        (3, 4099),
        (2, 50257),
        (64, 50257),
        (1000, 7),
        (16, 1024),
    ),
    bench_size=(8192, 50257),
    # read the logits, write their gradient; targets, lse and dloss once per row
    bytes_moved=lambda size: 4 * (2 * size[0] * size[1] + 3 * size[0]),
    # relative to max(|dlogits|, 1): each element is (p - [k == t]) * dloss with
    # p = expf(x - lse) at most 1 and |dloss| up to ~6, so an error of a few ulp of
    # the largest gradient: at most 1.1e-7 measured on the CPU backend (every size
    # and block, six seeds); the GPU's expf is within 2 ulp, not 1: 1e-6.
    tolerance=1e-6,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
