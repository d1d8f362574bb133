"""The gradient of conv (B11) with respect to its filters, any geometry: direct,
and a split-K implicit GEMM.

python -m thousand.kernels.conv_backward_filter
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
    PLAIN,
    TILE,
    TILE_THREADS,
    conv_flops,
    ints,
    padded_windows,
)
from thousand.kernels.conv_geometry import ConvGeometry
from thousand.kernels.family import Family, Version
from thousand.kernels.layer_launch import scratch

OP = "conv_backward_filter"
SLICE_PIXELS = 1024  # v2: at least this many output pixels to a slice of the sum
MAX_SPLITS = 128


# --8<-- [start:ref]
def conv_backward_filter_ref(X, dY, rs, geom: ConvGeometry) -> np.ndarray:
    """dK[r,s,c,f] = sum over pixels of the input under tap (r, s) times dY."""
    R, S = rs
    win = padded_windows(X, R, S, geom)  # (N, P, Q, R, S, C)
    G, C, F = geom.groups, X.shape[3], dY.shape[3]
    Cg, Fg = C // G, F // G
    return np.concatenate(
        [
            np.einsum(
                "npqrsc,npqf->rscf",
                win[..., g * Cg : (g + 1) * Cg],
                dY[..., g * Fg : (g + 1) * Fg].astype(np.float64),
            )
            for g in range(G)
        ],
        axis=3,
    )


# --8<-- [end:ref]


def _start(X, dY, rs, geom, out, block):
    if not isinstance(geom, ConvGeometry):
        raise ValueError(
            f"{OP}: `geom` must be a ConvGeometry, got {type(geom).__name__}"
        )
    check_array(OP, "X", X, ndim=4)  # (N, H, W, C)
    check_array(OP, "dY", dY, ndim=4)  # (N, P, Q, F)
    if not (
        isinstance(rs, tuple | list)
        and len(rs) == 2
        and all(isinstance(v, int | np.integer) and v >= 1 for v in rs)
    ):
        raise ValueError(
            f"{OP}: `rs` must be the kernel's (R, S), two ints >= 1; got {rs!r}"
        )
    (N, H, W, C), (R, S) = X.shape, map(int, rs)
    N_y, P, Q, F = dY.shape
    if N_y != N:
        raise ValueError(f"{OP}: `X` holds {N} images, `dY` {N_y}")
    geom.check(OP, H, W, C, R, S, F)
    if geom.output_hw(H, W, R, S) != (P, Q):
        raise ValueError(
            f"{OP}: `X` ({H} x {W}) gives a {geom.output_hw(H, W, R, S)} output with "
            f"an {R} x {S} kernel and this geometry; `dY` is {P} x {Q}"
        )
    shape = (R, S, C // geom.groups, F)
    check_index_range(OP, "the output", *shape)
    check_index_range(OP, "the pixels of dY", N, P, Q)
    if out is not None:
        check_array(OP, "out", out, ndim=4)
        check_shape(OP, "out", out, shape)
    check_block(OP, (block,))
    stage = Staging(OP, X, dY, names=("X", "dY"))
    dX, ddY = stage.inputs()
    return stage, dX, ddY, stage.output(out, shape), (N, H, W, C, R, S, F)


# --8<-- [start:launchers]
def conv_backward_filter_v1(X, dY, rs, geom=PLAIN, out=None, block=256):
    stage, dX, ddY, dK, sizes = _start(X, dY, rs, geom, out, block)
    if dK.size:
        grid = (cdiv(dK.size, block),)
        launch(
            OP,
            "conv_backward_filter_v1",
            grid,
            (block,),
            dX,
            ddY,
            dK,
            *ints(sizes, geom),
        )
    return stage.result(dK, out)


def splits_for(pixels: int) -> int:
    """How many slices v2 cuts the sum over pixels into: enough blocks to fill the
    GPU for a small layer, each slice long enough to keep a block busy."""
    return max(1, min(MAX_SPLITS, pixels // SLICE_PIXELS))


def conv_backward_filter_v2(X, dY, rs, geom=PLAIN, out=None, block=TILE_THREADS):
    if block != TILE_THREADS:
        raise ValueError(
            f"{OP}: v2 is written for blocks of {TILE_THREADS} threads, "
            f"got block={block!r}"
        )
    stage, dX, ddY, dK, sizes = _start(X, dY, rs, geom, out, block)
    if dK.size:
        pixels = ddY.size // ddY.shape[3]
        splits = splits_for(pixels)
        chunk = cdiv(cdiv(pixels, splits), 16) * 16  # whole BK-deep tiles a slice
        splits = cdiv(pixels, chunk) if pixels else 1
        taps, Fg = dK.size // dK.shape[3], dK.shape[3] // geom.groups
        partial = scratch(OP, "partial sums", (splits, dK.size))
        if pixels == 0:  # an empty batch: every weight's sum is empty
            partial.fill(0)
        else:
            grid = (cdiv(Fg, TILE[1]), cdiv(taps, TILE[0]), splits * geom.groups)
            launch(
                OP,
                "conv_backward_filter_v2",
                grid,
                (block,),
                dX,
                ddY,
                partial,
                np.int32(chunk),
                *ints(sizes, geom),
            )
        launch(
            OP,
            "conv_backward_filter_sum",
            (cdiv(dK.size, 256),),
            (256,),
            partial,
            dK,
            np.int32(dK.size),
            np.int32(splits),
        )
    return stage.result(dK, out)


# --8<-- [end:launchers]


def conv_backward_filter(X, dY, rs, geom=PLAIN, out=None, version=2, block=None):
    v = FAMILY.version(version)
    return v.run(X, dY, rs, geom, out=out, block=block or v.default_block)


def make_inputs(rng, size):
    N, H, W, C, R, S, F, *g = size
    geom = ConvGeometry(*g)
    P, Q = geom.output_hw(H, W, R, S)
    return (
        rng.standard_normal((N, H, W, C), dtype=np.float32),
        rng.standard_normal((N, P, Q, F), dtype=np.float32),
        (R, S),
        geom,
    )


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "conv_backward_filter_v1",
            "direct: one thread per weight, a loop over every output pixel",
            conv_backward_filter_v1,
            blocks=(64, 256),
        ),
        Version(
            2,
            "conv_backward_filter_v2",
            "split-K implicit GEMM: the sum over "
            "pixels cut into slices, added in order",
            conv_backward_filter_v2,
            blocks=(TILE_THREADS,),
            default_block=TILE_THREADS,
        ),
    ),
    ref=conv_backward_filter_ref,
    helpers=("conv_backward_filter_sum",),
    make_inputs=make_inputs,
    check_sizes=CONV_SIZES,
    bench_size=CONV_BENCH,
    flops=conv_flops,
    tolerance=1e-5,  # sums over N P Q terms; relative to the largest weight gradient
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
