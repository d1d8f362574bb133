"""The gradient of conv (B11) with respect to its input, any geometry: direct, and
implicit GEMM (the transposed convolution on the warp-tiled GEMM).

python -m thousand.kernels.conv_backward_data
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
from thousand.kernels.conv import (
    CONV_BENCH,
    CONV_SIZES,
    GRID_Y_LIMIT,
    PLAIN,
    TILE,
    TILE_THREADS,
    conv_flops,
    ints,
)
from thousand.kernels.conv_geometry import ConvGeometry
from thousand.kernels.family import Family, Version
from thousand.kernels.layer_launch import scratch

OP = "conv_backward_data"


# --8<-- [start:ref]
def conv_backward_data_ref(dY, K, hw, geom: ConvGeometry) -> np.ndarray:
    """dX = the sum, over output pixels, of dY times the weights of every tap of the
    window that pixel read: the transpose of conv_ref's gather, as a scatter into a
    padded image (then the padding cut off)."""
    N, P, Q, F = dY.shape
    R, S, Cg, _ = K.shape
    (H, W), G, Fg = hw, geom.groups, F // geom.groups
    st, d, pad = geom.stride, geom.dilation, geom.pad
    dXp = np.zeros((N, H + 2 * pad, W + 2 * pad, Cg * G))
    for g in range(G):
        dy = dY[..., g * Fg : (g + 1) * Fg].astype(np.float64)
        for r in range(R):
            for s in range(S):
                part = np.einsum("npqf,cf->npqc", dy, K[r, s, :, g * Fg : (g + 1) * Fg])
                h0, w0 = r * d, s * d
                dXp[
                    :,
                    h0 : h0 + (P - 1) * st + 1 : st,
                    w0 : w0 + (Q - 1) * st + 1 : st,
                    g * Cg : (g + 1) * Cg,
                ] += part
    return dXp[:, pad : pad + H, pad : pad + W, :]


# --8<-- [end:ref]


def _start(dY, K, hw, geom, out, block):
    if not isinstance(geom, ConvGeometry):
        raise ValueError(
            f"{OP}: `geom` must be a ConvGeometry, got {type(geom).__name__}"
        )
    check_array(OP, "dY", dY, ndim=4)  # (N, P, Q, F)
    check_array(OP, "K", K, ndim=4)  # (R, S, C/G, F)
    if not (
        isinstance(hw, tuple | list)
        and len(hw) == 2
        and all(isinstance(v, int | np.integer) and v >= 1 for v in hw)
    ):
        raise ValueError(
            f"{OP}: `hw` must be the input's (H, W), two ints >= 1; got {hw!r}"
        )
    N, P, Q, F = dY.shape
    R, S, Cg, F_k = K.shape
    (H, W), C = map(int, hw), Cg * geom.groups
    if F_k != F:
        raise ValueError(f"{OP}: `K` has {F_k} output channels, `dY` has {F}")
    geom.check(OP, H, W, C, R, S, F)
    if geom.output_hw(H, W, R, S) != (P, Q):
        raise ValueError(
            f"{OP}: a {H} x {W} input gives a {geom.output_hw(H, W, R, S)} output "
            f"with this kernel and geometry; `dY` is {P} x {Q}"
        )
    check_index_range(OP, "the output", N, H, W, C)
    if out is not None:
        check_array(OP, "out", out, ndim=4)
        check_shape(OP, "out", out, (N, H, W, C))
    check_block(OP, (block,))
    stage = Staging(OP, dY, K, names=("dY", "K"))
    ddY, dK = stage.inputs()
    return stage, ddY, dK, stage.output(out, (N, H, W, C)), (N, H, W, C, R, S, F)


# --8<-- [start:launchers]
def conv_backward_data_v1(dY, K, hw, geom=PLAIN, out=None, block=256):
    stage, ddY, dK, dX, sizes = _start(dY, K, hw, geom, out, block)
    if dX.size:
        grid = (cdiv(dX.size, block),)
        launch(
            OP, "conv_backward_data_v1", grid, (block,), ddY, dK, dX, *ints(sizes, geom)
        )
    return stage.result(dX, out)


def conv_backward_data_v2(dY, K, hw, geom=PLAIN, out=None, block=TILE_THREADS):
    if block != TILE_THREADS:
        raise ValueError(
            f"{OP}: v2 is written for blocks of {TILE_THREADS} threads, "
            f"got block={block!r}"
        )
    stage, ddY, dK, dX, sizes = _start(dY, K, hw, geom, out, block)
    if dX.size:
        pixels, Cg = dX.size // dX.shape[3], dX.shape[3] // geom.groups
        grid = (cdiv(Cg, TILE[1]), cdiv(pixels, TILE[0]), geom.groups)
        if grid[1] > GRID_Y_LIMIT:
            raise ValueError(
                f"{OP}: v2 takes at most {GRID_Y_LIMIT * TILE[0]:,} input pixels "
                f"(N H W), got {pixels:,}; split the batch"
            )
        Kt = scratch(OP, "K, channels swapped", (dK.size,))
        args = ints(sizes, geom)
        launch(
            OP,
            "conv_backward_data_filter",
            (cdiv(dK.size, 256),),
            (256,),
            dK,
            Kt,
            *args,
        )
        launch(OP, "conv_backward_data_v2", grid, (block,), ddY, Kt, dX, *args)
    return stage.result(dX, out)


# --8<-- [end:launchers]


def conv_backward_data(dY, K, hw, geom=PLAIN, out=None, version=2, block=None):
    v = FAMILY.version(version)
    return v.run(dY, K, hw, geom, out=out, block=block or v.default_block)


def make_inputs(rng, size):
    N, H, W, C, R, S, F, *g = size
    geom = ConvGeometry(*g)
    P, Q = geom.output_hw(H, W, R, S)
    return (
        rng.standard_normal((N, P, Q, F), dtype=np.float32),
        rng.standard_normal((R, S, C // geom.groups, F), dtype=np.float32),
        (H, W),
        geom,
    )


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "conv_backward_data_v1",
            "direct: one thread per input, a loop over the taps that reach it",
            conv_backward_data_v1,
            blocks=(64, 256),
        ),
        Version(
            2,
            "conv_backward_data_v2",
            "implicit GEMM: the transposed convolution on the warp-tiled GEMM",
            conv_backward_data_v2,
            blocks=(TILE_THREADS,),
            default_block=TILE_THREADS,
        ),
    ),
    ref=conv_backward_data_ref,
    helpers=("conv_backward_data_filter",),
    make_inputs=make_inputs,
    check_sizes=CONV_SIZES,
    bench_size=CONV_BENCH,
    flops=conv_flops,  # the same multiply-adds as the forward pass
    tolerance=1e-5,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
