"""float32 matrix multiplication on the CUDA cores, tuned: B9's last rungs after
matmul_v7. One template (warp_tiled.cuh) over the tile shape; v1 keeps v7's
shape and adds a swizzled A^T and two shared buffers, v2 takes the shape the sweep
of experiment b9-sgemm-tiles found fastest on an H200.

python -m thousand.kernels.sgemm
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import (
    Staging,
    cdiv,
    check_aligned,
    check_array,
    check_block,
    check_index_range,
    check_shape,
    launch,
)
from thousand.kernels.family import Family, Version
from thousand.kernels.matmul import make_inputs, matmul_ref

OP = "sgemm"
THREADS = 256  # 8 warps, both rungs


def sgemm_ref(a, b):
    return matmul_ref(a, b)


def _run(name, tile, a, b, out, block):
    """Check, stage, launch one block of THREADS threads a tile (rows, cols) of C."""
    check_array(OP, "a", a, ndim=2)  # M x K
    check_array(OP, "b", b, ndim=2)  # K x N
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            f"{OP}: inner dimensions differ: a is {a.shape}, b is {b.shape} "
            "(a must be M x K and b K x N)"
        )
    (M, K), N = a.shape, b.shape[1]
    check_index_range(OP, "the output", M, N)
    if out is not None:
        check_array(OP, "out", out, ndim=2)
        check_shape(OP, "out", out, (M, N))
    if check_block(OP, block, ndim=1) != (THREADS,):
        raise ValueError(f"{OP}: {name} is written for {THREADS} threads, got {block}")
    for arg, x in (("a", a), ("b", b), ("out", out)):
        if x is not None:
            check_aligned(OP, arg, x, 16)  # float4 loads and stores
    stage = Staging(OP, a, b, names=("a", "b"))
    da, db = stage.inputs()
    d_out = stage.output(out, (M, N))
    if M and N:
        grid = (cdiv(N, tile[1]), cdiv(M, tile[0]))
        ints = (np.int32(M), np.int32(N), np.int32(K))  # K = 0: zeros, from the loop
        launch(OP, name, grid, (THREADS,), da, db, d_out, *ints)
    return stage.result(d_out, out)


# --8<-- [start:launchers]
def sgemm_v1(a, b, out=None, block=THREADS):
    return _run("sgemm_v1", (128, 128), a, b, out, block)


def sgemm_v2(a, b, out=None, block=THREADS):
    return _run("sgemm_v2", (128, 256), a, b, out, block)


# --8<-- [end:launchers]


def sgemm(a, b, out=None, version=2, block=256):
    """C = a @ b, float32, row-major, on the CUDA cores."""
    return FAMILY.version(version).run(a, b, out=out, block=block)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "sgemm_v1",
            "v7's 128 x 128 tiles, A^T swizzled, two shared buffers",
            sgemm_v1,
            blocks=(256,),
        ),
        Version(
            2,
            "sgemm_v2",
            "128 x 256 tiles, 8 x 16 outputs a thread",
            sgemm_v2,
            blocks=(256,),
        ),
    ),
    ref=sgemm_ref,
    make_inputs=make_inputs,
    check_sizes=(
        (1, 1, 1),
        (3, 5, 7),
        (17, 31, 13),
        (129, 257, 65),
        (200, 130, 36),
        (1000, 300, 517),
        (513, 1027, 1024),
    ),
    bench_size=(4096, 4096, 4096),
    flops=lambda size: 2 * size[0] * size[1] * size[2],
    tolerance=1e-5,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
