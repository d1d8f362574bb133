"""2-D convolution in NHWC with stride, padding, dilation and groups (B11): direct,
im2col + GEMM, implicit GEMM on the CUDA cores.

python -m thousand.kernels.conv
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
    device_info,
    launch,
    on_cpu,
)
from thousand.kernels.conv_geometry import ConvGeometry
from thousand.kernels.family import Family, Version
from thousand.kernels.layer_launch import scratch
from thousand.kernels.matmul import matmul

OP = "conv"
TILE = (128, 64)  # v3's block tile: output pixels x output channels
TILE_THREADS = 128
GRID_Y_LIMIT = 65535  # CUDA's limit on gridDim.y, where v3 puts its row tiles
PLAIN = ConvGeometry()  # stride 1, no padding, no dilation, one group


# --8<-- [start:ref]
def padded_windows(X: np.ndarray, R: int, S: int, geom: ConvGeometry) -> np.ndarray:
    """windows[n, p, q, r, s, c] = X[n, p st - pad + r dil, q st - pad + s dil, c],
    zero in the padding (float64, a view of one padded copy)."""
    d, st = geom.dilation, geom.stride
    Xp = np.pad(
        X.astype(np.float64), ((0, 0), (geom.pad,) * 2, (geom.pad,) * 2, (0, 0))
    )
    P, Q = geom.output_hw(X.shape[1], X.shape[2], R, S)
    span_r, span_s = d * (R - 1) + 1, d * (S - 1) + 1
    w = np.lib.stride_tricks.sliding_window_view(Xp, (span_r, span_s), axis=(1, 2))
    # w[n, i, j, c, u, v] = Xp[n, i + u, j + v, c]: keep every st-th window, every
    # d-th tap of it
    return w[
        :, : (P - 1) * st + 1 : st, : (Q - 1) * st + 1 : st, :, ::d, ::d
    ].transpose(0, 1, 2, 4, 5, 3)


def conv_ref(X: np.ndarray, K: np.ndarray, geom: ConvGeometry) -> np.ndarray:
    """Each group's output channels from its own input channels."""
    R, S, Cg, F = K.shape
    G, Fg = geom.groups, F // geom.groups
    win = padded_windows(X, R, S, geom)  # (N, P, Q, R, S, C)
    return np.concatenate(
        [
            np.einsum(
                "npqrsc,rscf->npqf",
                win[..., g * Cg : (g + 1) * Cg],
                K[..., g * Fg : (g + 1) * Fg],
            )
            for g in range(G)
        ],
        axis=3,
    )


# --8<-- [end:ref]


def dims(op, X, K, geom, x_name="X", k_name="K"):
    """Check an NHWC input, an R x S x C/G x F kernel and the geometry; return
    (N, H, W, C, R, S, F) and the output shape (N, P, Q, F)."""
    if not isinstance(geom, ConvGeometry):
        raise ValueError(
            f"{op}: `geom` must be a ConvGeometry (stride, pad, dilation, groups), "
            f"got {type(geom).__name__}"
        )
    check_array(op, x_name, X, ndim=4)  # (N, H, W, C)
    check_array(op, k_name, K, ndim=4)  # (R, S, C/G, F)
    N, H, W, C = X.shape
    R, S, Cg, F = K.shape
    if Cg * geom.groups != C:
        raise ValueError(
            f"{op}: `{k_name}` has {Cg} input channels a group and groups = "
            f"{geom.groups}, so it reads {Cg * geom.groups} channels; "
            f"`{x_name}` has {C}"
        )
    geom.check(op, H, W, C, R, S, F)
    return (N, H, W, C, R, S, F), (N, *geom.output_hw(H, W, R, S), F)


def ints(sizes, geom):
    """The kernels' integer arguments: N H W C R S F, stride, pad, dilation, groups."""
    g = (geom.stride, geom.pad, geom.dilation, geom.groups)
    return [np.int32(v) for v in (*sizes, *g)]


def _start(X, K, geom, out, block):
    sizes, shape = dims(OP, X, K, geom)
    check_index_range(OP, "the output", *shape)  # every size before any allocation
    N, H, W, C, R, S, F = sizes
    check_index_range(OP, "the patch matrix", N * shape[1] * shape[2], R * S * C)
    if out is not None:
        check_array(OP, "out", out, ndim=4)
        check_shape(OP, "out", out, shape)
    check_block(OP, (block,))
    stage = Staging(OP, X, K, names=("X", "K"))
    dX, dK = stage.inputs()
    return stage, dX, dK, stage.output(out, shape), sizes


# --8<-- [start:launchers]
def conv_v1(X, K, geom=PLAIN, out=None, block=256):
    stage, dX, dK, dY, sizes = _start(X, K, geom, out, block)
    if dY.size:
        grid = (cdiv(dY.size, block),)
        launch(OP, "conv_v1", grid, (block,), dX, dK, dY, *ints(sizes, geom))
    return stage.result(dY, out)


def conv_v2(X, K, geom=PLAIN, out=None, block=256):
    stage, dX, dK, dY, sizes = _start(X, K, geom, out, block)
    if dY.size:
        N, _, _, C, R, S, F = sizes
        _, P, Q, _ = dY.shape
        G, rows, taps, Fg = (
            geom.groups,
            N * P * Q,
            R * S * (C // geom.groups),
            F // geom.groups,
        )
        cols = _slabs("cols", G, rows, taps)  # a patch per row, per group
        grid = (cdiv(G * rows * taps, block),)
        launch(
            OP,
            "conv_v2",
            grid,
            (block,),
            dX,
            cols.base,
            np.int32(cols.stride),
            *ints(sizes, geom),
        )
        if G == 1:  # the product lands in Y as it is: NHWC is (N P Q) x F
            matmul(cols[0], dK.reshape(taps, F), out=dY.reshape(rows, F))
        else:  # each group's GEMM on its own columns of K, then back into place
            Kg, Yg = (
                _slabs("K by group", G, taps, Fg),
                _slabs("Y by group", G, rows, Fg),
            )
            _swap01(dK, Kg.base, taps, G, Fg, G * Fg, Kg.stride, block)
            for g in range(G):
                matmul(cols[g], Kg[g], out=Yg[g])
            _swap01(Yg.base, dY, G, rows, Fg, Yg.stride, G * Fg, block)
    return stage.result(dY, out)


def conv_v3(X, K, geom=PLAIN, out=None, block=TILE_THREADS):
    return _implicit("conv_v3", X, K, geom, out, block)


def conv_v4(X, K, geom=PLAIN, out=None, block=TILE_THREADS):
    if not on_cpu() and float(device_info()["compute_capability"]) < 8.0:
        raise ValueError(f"{OP}: conv_v4 needs TF32 tensor cores (sm_80 or later)")
    return _implicit("conv_v4", X, K, geom, out, block)


# --8<-- [end:launchers]


def _implicit(name, X, K, geom, out, block):
    """v3 and v4: one block of 128 threads per 128 x 64 tile of a group's output."""
    if block != TILE_THREADS:
        raise ValueError(
            f"{OP}: {name} is written for blocks of {TILE_THREADS} threads, "
            f"got block={block!r}"
        )
    stage, dX, dK, dY, sizes = _start(X, K, geom, out, block)
    if dY.size:
        rows, Fg = dY.size // dY.shape[3], dY.shape[3] // geom.groups
        grid = (cdiv(Fg, TILE[1]), cdiv(rows, TILE[0]), geom.groups)
        if grid[1] > GRID_Y_LIMIT:
            raise ValueError(
                f"{OP}: {name} takes at most {GRID_Y_LIMIT * TILE[0]:,} output pixels "
                f"(N P Q), got {rows:,}; split the batch"
            )
        launch(OP, name, grid, (block,), dX, dK, dY, *ints(sizes, geom))
    return stage.result(dY, out)


class _slabs:
    """G matrices of rows x cols in one scratch buffer (`base`), `stride` floats
    apart: a multiple of 4, so that each starts on the 16-byte boundary matmul's
    vector loads need; slabs[g] is matrix g as a view of its own."""

    def __init__(self, name, G, rows, cols):
        self.stride = cdiv(rows * cols, 4) * 4
        self.base = scratch(OP, name, (G * self.stride,))
        self.rows, self.cols = rows, cols

    def __getitem__(self, g):
        start = g * self.stride
        return self.base[start : start + self.rows * self.cols].reshape(
            self.rows, self.cols
        )


def _swap01(src, dst, A, B, E, src_stride, dst_stride, block):
    """dst[b][a][e] = src[a][b][e], the first axis of each `*_stride` floats apart
    (conv_swap01)."""
    grid = (cdiv(A * B * E, block),)
    sizes = map(np.int32, (A, B, E, src_stride, dst_stride))
    launch(OP, "conv_swap01", grid, (block,), src, dst, *sizes)


def conv(X, K, geom=PLAIN, out=None, version=3, block=None):
    v = FAMILY.version(version)
    return v.run(X, K, geom, out=out, block=block or v.default_block)


def make_inputs(rng, size):
    N, H, W, C, R, S, F, *g = size
    geom = ConvGeometry(*g)
    return (
        rng.standard_normal((N, H, W, C), dtype=np.float32),
        rng.standard_normal((R, S, C // geom.groups, F), dtype=np.float32),
        geom,
    )


def conv_flops(size) -> int:
    """2 N P Q F R S C/G: each output a dot product over its group's window."""
    N, H, W, C, R, S, F, *g = size
    geom = ConvGeometry(*g)
    P, Q = geom.output_hw(H, W, R, S)
    return 2 * N * P * Q * F * R * S * (C // geom.groups)


# (N, H, W, C, R, S, F, stride, pad, dilation, groups): 1s; a kernel as large as the
# padded image; ragged channels (no float4); every option alone and together;
# depthwise (groups = C = F); shapes ragged on v3's 128 x 64 tiles
CONV_SIZES = (
    (1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1),
    (1, 3, 3, 1, 5, 5, 1, 1, 1, 1, 1),
    (2, 7, 9, 3, 3, 2, 5, 1, 0, 1, 1),
    (2, 9, 8, 4, 3, 3, 8, 2, 1, 1, 1),
    (1, 11, 10, 8, 3, 3, 12, 1, 2, 2, 1),
    (2, 8, 7, 12, 3, 3, 12, 1, 1, 1, 3),
    (2, 9, 9, 8, 3, 3, 8, 2, 1, 1, 2),
    (1, 10, 11, 8, 3, 3, 8, 1, 1, 1, 8),
    (3, 13, 12, 16, 3, 3, 20, 2, 1, 2, 4),
    (2, 12, 11, 16, 1, 1, 68, 1, 0, 1, 1),
)
# B11's benchmark: a ResNet 3 x 3 layer (the issue's shape), TF32 off on both sides
CONV_BENCH = (32, 56, 56, 64, 3, 3, 64, 1, 1, 1, 1)

FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "conv_v1",
            "direct: one thread per output, a loop over the window",
            conv_v1,
            blocks=(64, 256),
        ),
        Version(
            2,
            "conv_v2",
            "im2col: the patch matrix written out, then the GEMM",
            conv_v2,
            blocks=(256,),
        ),
        Version(
            3,
            "conv_v3",
            "implicit GEMM: patches gathered into the GEMM's tiles",
            conv_v3,
            blocks=(TILE_THREADS,),
            default_block=TILE_THREADS,
        ),
        Version(
            4,
            "conv_v4",
            "tensor cores: the implicit GEMM on TF32 mma.sync",
            conv_v4,
            blocks=(TILE_THREADS,),
            default_block=TILE_THREADS,
            gpu_only="mma.sync on tensor cores is a PTX instruction",
            tolerance=5e-3,  # TF32 keeps 10 of float32's 23 mantissa bits
            baseline="conv_tf32",
        ),
    ),
    ref=conv_ref,
    helpers=("conv_swap01",),
    make_inputs=make_inputs,
    check_sizes=CONV_SIZES,
    bench_size=CONV_BENCH,
    flops=conv_flops,
    tolerance=1e-5,  # sums of up to R*S*C/G float32 products
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
