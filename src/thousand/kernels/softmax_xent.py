"""Softmax cross-entropy: the per-row loss and the gradient of the mean loss.

python -m thousand.kernels.softmax_xent
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick
from thousand.kernels.layer_launch import scratch

OP = "softmax_xent"


# --8<-- [start:ref]
def log_softmax(Z: np.ndarray) -> np.ndarray:
    Z = Z.astype(np.float64)
    m = Z.max(axis=1, keepdims=True)
    return Z - m - np.log(np.exp(Z - m).sum(axis=1, keepdims=True))


def softmax_xent_loss_ref(Z: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Per-row loss, -sum_c T log softmax(Z)."""
    return -(T * log_softmax(Z)).sum(axis=1)


def softmax_xent_ref(Z: np.ndarray, T: np.ndarray) -> np.ndarray:
    """The gradient of the mean loss over the M rows: (softmax(Z) - T) / M."""
    return (np.exp(log_softmax(Z)) - T) / Z.shape[0]


# --8<-- [end:ref]


def softmax_xent_v1(Z, T, out=None, block=128, loss=None):
    """Writes the gradient into `out` (returned) and the per-row loss into `loss`
    when given (an M-vector of the same kind of array as Z)."""
    check_array(OP, "Z", Z, ndim=2)  # (M, C) logits
    M, C = Z.shape
    check_array(OP, "T", T, ndim=2)  # (M, C) targets
    check_shape(OP, "T", T, (M, C))
    for arg, a, shape in (("out", out, (M, C)), ("loss", loss, (M,))):
        if a is not None:
            check_array(OP, arg, a, ndim=len(shape))
            check_shape(OP, arg, a, shape)
    check_block(OP, (block,))
    stage = Staging(OP, Z, T, names=("Z", "T"))
    dZ, dT = stage.inputs()
    d_out = stage.output(out, (M, C))
    if loss is not None:  # a second output: it must not overlap the first either
        stage.named["out"] = out
    # no `loss` wanted: the kernel writes it into a buffer kept between calls
    d_loss = (
        scratch(OP, "loss", (M,))
        if loss is None
        else stage.output(loss, (M,), name="loss")
    )
    if M and C:
        launch(
            OP,
            "softmax_xent_v1",
            (cdiv(M, block),),
            (block,),
            dZ,
            dT,
            d_out,
            d_loss,
            np.int32(M),
            np.int32(C),
        )
    if loss is not None and stage.on_host:
        d_loss.get(ary=loss)
    return stage.result(d_out, out)


def softmax_xent(Z, T, out=None, version=1, block=128, loss=None):
    return pick(FAMILY, version)(Z, T, out=out, block=block, loss=loss)


def make_inputs(rng, size):
    M, C = size
    Z = (rng.standard_normal((M, C)) * 30).astype(np.float32)  # exp(30) and beyond
    T = np.zeros((M, C), dtype=np.float32)
    T[np.arange(M), rng.integers(0, C, M)] = 1.0  # one-hot labels
    return Z, T


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "softmax_xent_v1",
            "one thread per row: max, sum of exponentials, then loss and gradient",
            softmax_xent_v1,
            blocks=(32, 128),
            default_block=128,
        ),
    ),
    ref=softmax_xent_ref,
    make_inputs=make_inputs,
    check_sizes=((1, 1), (1, 10), (7, 3), (100, 10), (1000, 37), (4099, 10)),
    bench_size=(2**20, 10),
    bytes_moved=lambda size: 4 * (3 * size[0] * size[1] + size[0]),
    # relative to max(|ref|, 1): the gradient's entries are at most 1 / M
    tolerance=1e-6,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
