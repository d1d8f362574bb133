"""Matrix multiplication, the ladder of B9: naive, coalesced, shared-memory tiles,
1-D and 2-D register blocking, 16-byte loads, warp tiling, then tensor cores.

python -m thousand.kernels.matmul
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
    device_info,
    launch,
    on_cpu,
    shared_memory_optin,
)
from thousand.kernels.family import Family, Version

OP = "matmul"


def _tc_config(warps_m=2, warps_n=4, wtm=4, wtn=8, bk=32, stages=3):
    """matmul_v8's tile shape, as the #defines of matmul.cu set it."""
    bm, bn = warps_m * wtm * 16, warps_n * wtn * 8
    floats = stages * (bm * (bk + 4) + bk * (bn + 8))  # padded A and B stages
    return {"bm": bm, "bn": bn, "threads": 32 * warps_m * warps_n, "shared": 4 * floats}


TC = _tc_config()


def matmul_ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """In float64: the float32 kernels are judged against the exact product."""
    return a.astype(np.float64) @ b.astype(np.float64)


def _check(a, b, out):
    check_array(OP, "a", a, ndim=2)  # (M, K)
    check_array(OP, "b", b, ndim=2)  # (K, N)
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            f"{OP}: inner dimensions differ: a is {a.shape}, b is {b.shape} "
            "(a must be M x K and b K x N)"
        )
    shape = (a.shape[0], b.shape[1])  # (M, N)
    check_index_range(OP, "the output", *shape)  # C[row * N + col] in int
    if out is not None:
        check_array(OP, "out", out, ndim=2)
        check_shape(OP, "out", out, shape)
    return shape


def _matmul(
    name,
    a,
    b,
    out,
    block,
    *,
    tile=None,
    fixed=None,
    align=False,
    x_rows=False,
    shared=0,
):
    """Check, stage, launch. `tile` = (rows, cols) of C per block, else the block
    shape itself covers C; `fixed` is the one block shape a tiled kernel is written
    for; `align` asks for 16-byte aligned arrays (vector loads, cp.async);
    `x_rows` makes the grid's x run over the rows of C."""
    M, N = _check(a, b, out)
    K = a.shape[1]
    if tile is None:  # the block itself covers a block[1] x block[0] piece of C
        block = check_block(OP, block, ndim=2)
    else:
        block = check_block(OP, block if isinstance(block, tuple | list) else (block,))
    if fixed is not None and block != fixed:
        raise ValueError(f"{OP}: {name} is written for blocks of {fixed}, got {block}")
    if align:
        for arg, x in (("a", a), ("b", b), ("out", out)):
            if x is not None:
                check_aligned(OP, arg, x, 16)
    rows, cols = tile or (block[1], block[0])
    stage = Staging(OP, a, b, names=("a", "b"))
    da, db = stage.inputs()
    d_out = stage.output(out, (M, N))
    if M and N:
        if K == 0:  # an empty sum: no kernel reads a 0-wide A
            d_out.fill(0)
        else:
            grid = (cdiv(N, cols), cdiv(M, rows))
            if x_rows:
                grid = (cdiv(M, block[0]), cdiv(N, block[1]))
            ints = (np.int32(M), np.int32(N), np.int32(K))
            launch(OP, name, grid, block, da, db, d_out, *ints, shared=shared)
    return stage.result(d_out, out)


# --8<-- [start:launchers]
def matmul_v1(a, b, out=None, block=(32, 8)):
    return _matmul("matmul_v1", a, b, out, block, x_rows=True)


def matmul_v2(a, b, out=None, block=(32, 8)):
    return _matmul("matmul_v2", a, b, out, block)


def matmul_v3(a, b, out=None, block=(32, 32)):
    return _matmul("matmul_v3", a, b, out, block, tile=(32, 32), fixed=(32, 32))


def matmul_v4(a, b, out=None, block=512):
    return _matmul("matmul_v4", a, b, out, block, tile=(64, 64), fixed=(512,))


def matmul_v5(a, b, out=None, block=256):
    return _matmul("matmul_v5", a, b, out, block, tile=(128, 128), fixed=(256,))


def matmul_v6(a, b, out=None, block=256):
    return _matmul(
        "matmul_v6", a, b, out, block, tile=(128, 128), fixed=(256,), align=True
    )


def matmul_v7(a, b, out=None, block=256):
    return _matmul(
        "matmul_v7", a, b, out, block, tile=(128, 128), fixed=(256,), align=True
    )


def matmul_v8(a, b, out=None, block=TC["threads"]):
    if not on_cpu():
        if float(device_info()["compute_capability"]) < 8.0:
            raise ValueError(
                f"{OP}: matmul_v8 needs TF32 tensor cores (sm_80 or later)"
            )
        have = shared_memory_optin()
        if have < TC["shared"]:
            raise ValueError(
                f"{OP}: matmul_v8's pipeline needs {TC['shared'] // 1024} KiB of "
                f"shared memory per block and this GPU allows {have // 1024} KiB "
                "(A100 and H100 have enough; many GeForce cards do not)"
            )
    return _matmul(
        "matmul_v8",
        a,
        b,
        out,
        block,
        tile=(TC["bm"], TC["bn"]),
        fixed=(TC["threads"],),
        align=True,
        shared=TC["shared"],
    )


# --8<-- [end:launchers]


def matmul(a, b, out=None, version=7, block=None):
    """C = a @ b (float32, row-major). The default is the fastest CUDA-core version;
    version 8 uses tensor cores in TF32 (about 3 significant digits per product)."""
    v = FAMILY.version(version)
    return v.run(a, b, out=out, block=block or v.default_block)


def make_inputs(rng, size):
    M, N, K = size
    return (
        rng.standard_normal((M, K), dtype=np.float32),
        rng.standard_normal((K, N), dtype=np.float32),
    )


def _version(n, teaches, run, block, **kw):
    blocks = kw.pop("blocks", (block,))
    return Version(
        n, f"matmul_v{n}", teaches, run, blocks=blocks, default_block=block, **kw
    )


FAMILY = Family(
    name=OP,
    versions=(
        _version(
            1,
            "naive, x along the rows of C: uncoalesced",
            matmul_v1,
            (32, 8),
            blocks=((32, 8), (16, 16)),
        ),
        _version(
            2,
            "naive, x along the columns of C: coalesced",
            matmul_v2,
            (32, 8),
            blocks=((32, 8), (16, 16), (8, 8)),
        ),
        _version(3, "32 x 32 shared-memory tiles", matmul_v3, (32, 32)),
        _version(4, "1-D register blocking: 8 outputs per thread", matmul_v4, (512,)),
        _version(
            5, "2-D register blocking: 8 x 8 outputs per thread", matmul_v5, (256,)
        ),
        _version(6, "float4 loads, A transposed in shared memory", matmul_v6, (256,)),
        _version(
            7,
            "warp tiling and register double buffering",
            matmul_v7,
            (256,),
        ),
        _version(
            8,
            "tensor cores: mma.sync TF32, 3-stage cp.async pipeline",
            matmul_v8,
            (TC["threads"],),
            gpu_only="mma.sync on tensor cores and cp.async are PTX instructions",
            # TF32 keeps 10 of float32's 23 mantissa bits: each product is off by
            # up to 2^-11 relative, and K of them add up.
            tolerance=5e-3,
            baseline="matmul_tf32",
        ),
    ),
    ref=matmul_ref,
    make_inputs=make_inputs,
    # sizes are (M, N, K): 1, primes, ragged edges on every tile size, K % 4 != 0
    check_sizes=(
        (1, 1, 1),
        (3, 5, 7),
        (17, 31, 13),
        (64, 64, 64),
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
