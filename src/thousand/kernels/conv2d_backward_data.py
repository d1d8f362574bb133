"""The gradient of conv2d with respect to its input (A6): direct, and GEMM + col2im.

python -m thousand.kernels.conv2d_backward_data
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import (
    Staging,
    cdiv,
    check_array,
    check_block,
    check_index_range,
    check_shape,
    launch,
)
from thousand.kernels.conv2d import CONV_BENCH, CONV_SIZES, conv_flops
from thousand.kernels.family import Family, Version, pick
from thousand.kernels.layer_launch import scratch
from thousand.kernels.matmul import matmul
from thousand.kernels.transpose import transpose

OP = "conv2d_backward_data"


# --8<-- [start:ref]
def conv2d_backward_data_ref(dY: np.ndarray, K: np.ndarray) -> np.ndarray:
    """dX[n, p+r, q+s, c] += dY[n,p,q,f] K[r,s,c,f]: each output sends its gradient
    back to the R x S inputs it was made from."""
    N, P, Q, F = dY.shape
    R, S, C, _ = K.shape
    dX = np.zeros((N, P + R - 1, Q + S - 1, C))
    for r in range(R):
        for s in range(S):
            dX[:, r : r + P, s : s + Q, :] += np.einsum(
                "npqf,cf->npqc", dY.astype(np.float64), K[r, s]
            )
    return dX


# --8<-- [end:ref]


def _start(dY, K, out, block):
    check_array(OP, "dY", dY, ndim=4)  # (N, P, Q, F)
    check_array(OP, "K", K, ndim=4)  # (R, S, C, F)
    N, P, Q, F = dY.shape
    R, S, C, F_k = K.shape
    if F_k != F:
        raise ValueError(f"{OP}: `K` has {F_k} output channels, `dY` has {F}")
    H, W = P + R - 1, Q + S - 1
    if min(R, S) < 1:
        raise ValueError(f"{OP}: `K` is {R} x {S}; a kernel needs R, S >= 1")
    if F == 0:  # an empty sum; the patch gradients would have no inputs
        raise ValueError(f"{OP}: `dY` has no channels (F = 0); give it one or more")
    # every size before any allocation: dX, then v2's K^T and patch gradients
    check_index_range(OP, "the output", N, H, W, C)
    check_index_range(OP, "the patch gradients", N * P * Q, R * S * C)
    if out is not None:
        check_array(OP, "out", out, ndim=4)
        check_shape(OP, "out", out, (N, H, W, C))
    check_block(OP, (block,))
    stage = Staging(OP, dY, K, names=("dY", "K"))
    d_dY, dK = stage.inputs()
    return stage, d_dY, dK, stage.output(out, (N, H, W, C)), (N, H, W, C, R, S, F)


# --8<-- [start:launchers]
def conv2d_backward_data_v1(dY, K, out=None, block=256):
    stage, d_dY, dK, dX, (N, H, W, C, R, S, F) = _start(dY, K, out, block)
    if dX.size:
        ints = [np.int32(v) for v in (N, H, W, C, R, S, F)]
        grid = (cdiv(dX.size, block),)
        launch(OP, "conv2d_backward_data_v1", grid, (block,), d_dY, dK, dX, *ints)
    return stage.result(dX, out)


def conv2d_backward_data_v2(dY, K, out=None, block=256):
    stage, d_dY, dK, dX, (N, H, W, C, R, S, F) = _start(dY, K, out, block)
    if dX.size:
        P, Q = H - R + 1, W - S + 1
        KT = transpose(dK.reshape(R * S * C, F), out=scratch(OP, "KT", (F, R * S * C)))
        dcols = scratch(OP, "dcols", (N * P * Q, R * S * C))
        matmul(d_dY.reshape(N * P * Q, F), KT, out=dcols)  # dcols = dY K^T
        ints = [np.int32(v) for v in (N, H, W, C, R, S)]
        grid = (cdiv(dX.size, block),)
        launch(OP, "conv2d_backward_data_v2", grid, (block,), dcols, dX, *ints)
    return stage.result(dX, out)


# --8<-- [end:launchers]


def conv2d_backward_data(dY, K, out=None, version=2, block=256):
    return pick(FAMILY, version)(dY, K, out=out, block=block)


def make_inputs(rng, size):
    N, H, W, C, R, S, F = size
    return (
        rng.standard_normal((N, H - R + 1, W - S + 1, F), dtype=np.float32),
        rng.standard_normal((R, S, C, F), dtype=np.float32),
    )


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "conv2d_backward_data_v1",
            "direct: one thread per input pixel, gathering from its outputs",
            conv2d_backward_data_v1,
            blocks=(64, 256),
        ),
        Version(
            2,
            "conv2d_backward_data_v2",
            "GEMM to patch gradients, then col2im gathers them",
            conv2d_backward_data_v2,
            blocks=(256,),
        ),
    ),
    ref=conv2d_backward_data_ref,
    make_inputs=make_inputs,
    check_sizes=CONV_SIZES,  # (N, H, W, C, R, S, F) of the forward convolution
    bench_size=CONV_BENCH,
    flops=conv_flops,  # the same multiply-adds as the forward pass
    tolerance=1e-5,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
