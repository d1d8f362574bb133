"""The gradient of conv2d with respect to its kernel (A6): direct, and im2col^T + GEMM.

python -m thousand.kernels.conv2d_backward_filter
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

OP = "conv2d_backward_filter"


# --8<-- [start:ref]
def conv2d_backward_filter_ref(X: np.ndarray, dY: np.ndarray) -> np.ndarray:
    """dK[r,s,c,f] = sum over n, p, q of X[n, p+r, q+s, c] dY[n,p,q,f]."""
    N, P, Q, F = dY.shape
    R, S = X.shape[1] - P + 1, X.shape[2] - Q + 1
    dK = np.zeros((R, S, X.shape[3], F))
    for r in range(R):
        for s in range(S):
            window = X[:, r : r + P, s : s + Q, :].astype(np.float64)
            dK[r, s] = np.einsum("npqc,npqf->cf", window, dY)
    return dK


# --8<-- [end:ref]


def _start(X, dY, out, block):
    check_array(OP, "X", X, ndim=4)  # (N, H, W, C)
    check_array(OP, "dY", dY, ndim=4)  # (N, P, Q, F)
    N, H, W, C = X.shape
    N_y, P, Q, F = dY.shape
    if N_y != N or P > H or Q > W or min(P, Q) < 1:
        raise ValueError(
            f"{OP}: `dY` of shape {tuple(dY.shape)} is not the output of a "
            f"convolution of `X` of shape {tuple(X.shape)}"
        )
    R, S = H - P + 1, W - Q + 1
    if N == 0:  # an empty sum over the batch; the patch matrix would have no columns
        raise ValueError(f"{OP}: `X` and `dY` hold no images (N = 0); give one or more")
    # every size before any allocation: dK, then v2's transposed patches
    check_index_range(OP, "the output", R, S, C, F)
    check_index_range(OP, "the patch matrix", R * S * C, N * P * Q)
    if out is not None:
        check_array(OP, "out", out, ndim=4)
        check_shape(OP, "out", out, (R, S, C, F))
    check_block(OP, (block,))
    stage = Staging(OP, X, dY, names=("X", "dY"))
    dX, d_dY = stage.inputs()
    return stage, dX, d_dY, stage.output(out, (R, S, C, F)), (N, H, W, C, R, S, F)


# --8<-- [start:launchers]
def conv2d_backward_filter_v1(X, dY, out=None, block=256):
    stage, dX, d_dY, dK, (N, H, W, C, R, S, F) = _start(X, dY, out, block)
    if dK.size:
        ints = [np.int32(v) for v in (N, H, W, C, R, S, F)]
        grid = (cdiv(dK.size, block),)
        launch(OP, "conv2d_backward_filter_v1", grid, (block,), dX, d_dY, dK, *ints)
    return stage.result(dK, out)


def conv2d_backward_filter_v2(X, dY, out=None, block=256):
    stage, dX, d_dY, dK, (N, H, W, C, R, S, F) = _start(X, dY, out, block)
    if dK.size:
        P, Q = H - R + 1, W - S + 1
        colsT = scratch(OP, "colsT", (R * S * C, N * P * Q))
        ints = [np.int32(v) for v in (N, H, W, C, R, S)]
        grid = (cdiv(colsT.size, block),)
        launch(OP, "conv2d_backward_filter_v2", grid, (block,), dX, colsT, *ints)
        # dK = colsT dY: an inner dimension of N*P*Q, the long sum of v1
        matmul(colsT, d_dY.reshape(N * P * Q, F), out=dK.reshape(R * S * C, F))
    return stage.result(dK, out)


# --8<-- [end:launchers]


def conv2d_backward_filter(X, dY, out=None, version=2, block=256):
    return pick(FAMILY, version)(X, dY, out=out, block=block)


def make_inputs(rng, size):
    N, H, W, C, R, S, F = size
    return (
        rng.standard_normal((N, H, W, C), dtype=np.float32),
        rng.standard_normal((N, H - R + 1, W - S + 1, F), dtype=np.float32),
    )


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "conv2d_backward_filter_v1",
            "direct: one thread per weight, a loop over every output pixel",
            conv2d_backward_filter_v1,
            blocks=(64, 256),
        ),
        Version(
            2,
            "conv2d_backward_filter_v2",
            "transposed patches, then the GEMM sums over the pixels",
            conv2d_backward_filter_v2,
            blocks=(256,),
        ),
    ),
    ref=conv2d_backward_filter_ref,
    make_inputs=make_inputs,
    check_sizes=CONV_SIZES,  # (N, H, W, C, R, S, F) of the forward convolution
    bench_size=CONV_BENCH,
    flops=conv_flops,
    # sums of N*P*Q products (over 6,000 for LeNet-5's C1 at batch 8)
    tolerance=2e-5,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
