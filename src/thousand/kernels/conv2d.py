"""2-D convolution in NHWC, stride 1, no padding (A6): direct, and im2col + GEMM.

python -m thousand.kernels.conv2d
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
from thousand.kernels.family import Family, Version, pick
from thousand.kernels.layer_launch import scratch
from thousand.kernels.matmul import matmul

OP = "conv2d"


# --8<-- [start:ref]
def conv2d_ref(X: np.ndarray, K: np.ndarray) -> np.ndarray:
    """Y[n,p,q,f] = sum over r, s, c of X[n, p+r, q+s, c] K[r, s, c, f]."""
    R, S = K.shape[:2]
    patches = np.lib.stride_tricks.sliding_window_view(X, (R, S), axis=(1, 2))
    # patches[n, p, q, c, r, s] = X[n, p+r, q+s, c]
    return np.einsum("npqcrs,rscf->npqf", patches.astype(np.float64), K)


# --8<-- [end:ref]


def dims(op, X, K, x_name="X", k_name="K"):
    """Check an NHWC input and an R x S x C x F kernel; return N, H, W, C, R, S, F."""
    check_array(op, x_name, X, ndim=4)  # (N, H, W, C)
    check_array(op, k_name, K, ndim=4)  # (R, S, C, F)
    N, H, W, C = X.shape
    R, S, C_k, F = K.shape
    if C_k != C:
        raise ValueError(
            f"{op}: `{k_name}` has {C_k} input channels, `{x_name}` has {C}"
        )
    if C == 0:  # an empty sum; the patch matrix would have no columns
        raise ValueError(
            f"{op}: `{x_name}` has no channels (C = 0); give it one or more"
        )
    if R > H or S > W or min(R, S) < 1:
        raise ValueError(
            f"{op}: a {R} x {S} kernel does not fit in a {H} x {W} image (no padding)"
        )
    return N, H, W, C, R, S, F


def _start(X, K, out, block, patches=False):
    N, H, W, C, R, S, F = dims(OP, X, K)
    shape = (N, H - R + 1, W - S + 1, F)
    check_index_range(OP, "the output", *shape)  # every size before any allocation
    if patches:  # v2's scratch: one row per output pixel, R * S * C columns
        check_index_range(OP, "the patch matrix", N * shape[1] * shape[2], R * S * C)
    if out is not None:
        check_array(OP, "out", out, ndim=4)
        check_shape(OP, "out", out, shape)
    check_block(OP, (block,))
    stage = Staging(OP, X, K, names=("X", "K"))
    dX, dK = stage.inputs()
    return stage, dX, dK, stage.output(out, shape), (N, H, W, C, R, S, F)


# --8<-- [start:launchers]
def conv2d_v1(X, K, out=None, block=256):
    stage, dX, dK, dY, (N, H, W, C, R, S, F) = _start(X, K, out, block)
    if dY.size:
        ints = [np.int32(v) for v in (N, H, W, C, R, S, F)]
        launch(OP, "conv2d_v1", (cdiv(dY.size, block),), (block,), dX, dK, dY, *ints)
    return stage.result(dY, out)


def conv2d_v2(X, K, out=None, block=256):
    stage, dX, dK, dY, (N, H, W, C, R, S, F) = _start(X, K, out, block, True)
    if dY.size:
        P, Q = H - R + 1, W - S + 1
        cols = scratch(OP, "cols", (N * P * Q, R * S * C))  # one patch per row
        ints = [np.int32(v) for v in (N, H, W, C, R, S)]
        launch(OP, "conv2d_v2", (cdiv(cols.size, block),), (block,), dX, cols, *ints)
        matmul(cols, dK.reshape(R * S * C, F), out=dY.reshape(N * P * Q, F))
    return stage.result(dY, out)


# --8<-- [end:launchers]


def conv2d(X, K, out=None, version=2, block=256):
    return pick(FAMILY, version)(X, K, out=out, block=block)


def make_inputs(rng, size):
    N, H, W, C, R, S, F = size
    return (
        rng.standard_normal((N, H, W, C), dtype=np.float32),
        rng.standard_normal((R, S, C, F), dtype=np.float32),
    )


def conv_flops(size) -> int:
    N, H, W, C, R, S, F = size
    return 2 * N * (H - R + 1) * (W - S + 1) * F * R * S * C


# sizes are (N, H, W, C, R, S, F): 1s, a kernel as large as the image, primes and
# ragged shapes, LeNet-5's first layer on 32 x 32 images, its second at batch 8
CONV_SIZES = (
    (1, 1, 1, 1, 1, 1, 1),
    (1, 5, 5, 1, 5, 5, 1),
    (2, 7, 9, 3, 3, 2, 5),
    (3, 11, 6, 2, 4, 1, 7),
    (2, 10, 10, 4, 3, 3, 8),
    (1, 28, 28, 1, 5, 5, 6),
    (8, 14, 14, 6, 5, 5, 16),
)
CONV_BENCH = (256, 14, 14, 6, 5, 5, 16)  # LeNet-5's C3 on a batch of 256

FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "conv2d_v1",
            "direct: one thread per output, a loop over the window",
            conv2d_v1,
            blocks=(64, 256),
        ),
        Version(
            2,
            "conv2d_v2",
            "im2col: patches as rows of a matrix, then the GEMM",
            conv2d_v2,
            blocks=(256,),
        ),
    ),
    ref=conv2d_ref,
    make_inputs=make_inputs,
    check_sizes=CONV_SIZES,
    bench_size=CONV_BENCH,
    flops=conv_flops,
    tolerance=1e-5,  # sums of up to R*S*C float32 products
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
