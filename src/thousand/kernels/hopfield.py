"""One asynchronous sweep of a Hopfield network over a batch of states (A5).

python -m thousand.kernels.hopfield
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick

OP = "hopfield"
MAX_SHARED = 48 * 1024  # what a block may use without opting in


# --8<-- [start:ref]
def hopfield_ref(W: np.ndarray, S0: np.ndarray) -> np.ndarray:
    """Neurons 0..n-1 in turn, each seeing the ones before it already updated."""
    W, S = W.astype(np.float64), S0.astype(np.float64).copy()
    for i in range(W.shape[0]):
        h = S @ W[i]  # the field on neuron i, for every state at once
        S[:, i] = np.where(h > 0, 1.0, np.where(h < 0, -1.0, S[:, i]))
    return S


# --8<-- [end:ref]


def hopfield_v1(W, S0, out=None, block=64):
    check_array(OP, "W", W, ndim=2)  # (n, n)
    n = W.shape[0]
    check_shape(OP, "W", W, (n, n))
    check_array(OP, "S0", S0, ndim=2)  # (m, n): one state per row
    m = S0.shape[0]
    check_shape(OP, "S0", S0, (m, n))
    if out is not None:
        check_array(OP, "out", out, ndim=2)
        check_shape(OP, "out", out, (m, n))
    check_block(OP, (block,))
    if block & (block - 1):
        raise ValueError(f"{OP}: block must be a power of two, got {block}")
    shared = 4 * (n + block)
    if shared > MAX_SHARED:
        raise ValueError(
            f"{OP}: a state of {n} neurons needs {shared} bytes of shared memory; "
            f"this version keeps it under {MAX_SHARED}"
        )
    stage = Staging(OP, W, S0)
    dW, dS0 = stage.inputs()
    dS = stage.output(out, (m, n))
    if m and n:
        launch(
            OP,
            "hopfield_v1",
            (m,),
            (block,),
            dW,
            dS0,
            dS,
            np.int32(m),
            np.int32(n),
            shared=shared,
        )
    return stage.result(dS, out)


def hopfield(W, S0, out=None, version=1, block=64):
    return pick(FAMILY, version)(W, S0, out=out, block=block)


def make_inputs(rng, size):
    # Weights from a few stored patterns (integers, so every field is exact and a
    # field of exactly 0 happens), states of +-1.
    m, n = size
    P = np.where(rng.random((3, n)) < 0.5, -1.0, 1.0)
    W = P.T @ P
    np.fill_diagonal(W, 0.0)
    S0 = np.where(rng.random((m, n)) < 0.5, -1.0, 1.0)
    return W.astype(np.float32), S0.astype(np.float32)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "hopfield_v1",
            "one block per state: neurons in turn, a tree sum for each field",
            hopfield_v1,
            blocks=(32, 128),
            default_block=64,
        ),
    ),
    ref=hopfield_ref,
    make_inputs=make_inputs,
    check_sizes=((1, 1), (1, 7), (5, 64), (33, 100), (8, 1000)),  # (m, n)
    bench_size=(256, 1024),  # NumPy, too, must go neuron by neuron
    flops=lambda size: 2 * size[0] * size[1] * size[1],
    tolerance=0.0,  # integer fields: the kernel and NumPy decide alike
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
