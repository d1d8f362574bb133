"""1-D stencil (convolution with 9 taps): the taps in global, constant and shared
memory, and constant memory read the wrong way.

python -m thousand.kernels.stencil
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import (
    Staging,
    cdiv,
    check_array,
    check_block,
    check_shape,
    launch,
    set_constant,
)
from thousand.kernels.family import Family, Version, pick

OP = "stencil"
K = 9  # taps, as STENCIL_K in stencil.cu
R = (K - 1) // 2


def stencil_ref(x: np.ndarray, taps: np.ndarray) -> np.ndarray:
    """out[i] = sum_k taps[k] * x[i + k - R], zeros outside x; computed in float64."""
    n = x.shape[0]
    padded = np.zeros(n + 2 * R)
    padded[R : R + n] = x
    out = np.zeros(n)
    for k in range(K):
        out += np.float64(taps[k]) * padded[k : k + n]
    return out.astype(np.float32)


def _checked(x, taps, out, block) -> int:
    check_array(OP, "x", x, ndim=1)
    check_array(OP, "taps", taps, ndim=1)
    check_shape(OP, "taps", taps, (K,))
    if out is not None:
        check_array(OP, "out", out, ndim=1)
        check_shape(OP, "out", out, x.shape)
    check_block(OP, (block,))
    return x.shape[0]


# --8<-- [start:launchers]
def stencil_v1(x, taps, out=None, block=256):
    n = _checked(x, taps, out, block)
    stage = Staging(OP, x, taps)
    dx, dtaps = stage.inputs()
    d_out = stage.output(out, (n,))
    if n:
        grid = (cdiv(n, block),)
        launch(OP, "stencil_v1", grid, (block,), dx, dtaps, d_out, np.int32(n))
    return stage.result(d_out, out)


def _constant_taps(name, x, taps, out, block, shared=0):
    """v2-v4: the taps go into __constant__ memory before the launch."""
    n = _checked(x, taps, out, block)
    stage = Staging(OP, x, taps)
    dx, dtaps = stage.inputs()
    d_out = stage.output(out, (n,))
    if n:
        set_constant(OP, "stencil_taps", dtaps, dtype=np.float32)
        grid = (cdiv(n, block),)
        launch(OP, name, grid, (block,), dx, d_out, np.int32(n), shared=shared)
    return stage.result(d_out, out)


def stencil_v2(x, taps, out=None, block=256):
    return _constant_taps("stencil_v2", x, taps, out, block)


def stencil_v3(x, taps, out=None, block=256):
    (block,) = check_block(OP, block, ndim=1)  # an int before it sizes anything
    shared = (block + 2 * R) * 4  # the block's inputs and a halo of R each side
    return _constant_taps("stencil_v3", x, taps, out, block, shared=shared)


def stencil_v4(x, taps, out=None, block=256):
    return _constant_taps("stencil_v4", x, taps, out, block)


# --8<-- [end:launchers]


def stencil(x, taps, out=None, version=2, block=256):
    return pick(FAMILY, version)(x, taps, out=out, block=block)


def make_inputs(rng, size):
    (n,) = size
    return (
        rng.standard_normal(n, dtype=np.float32),
        rng.standard_normal(K, dtype=np.float32),
    )


BLOCKS = (32, 128, 256, 1024)
FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "stencil_v1",
            "taps in global memory, through a pointer",
            stencil_v1,
            blocks=BLOCKS,
        ),
        Version(
            2,
            "stencil_v2",
            "taps in constant memory: one broadcast per warp",
            stencil_v2,
            blocks=BLOCKS,
        ),
        Version(
            3,
            "stencil_v3",
            "constant taps, inputs staged in a shared-memory window",
            stencil_v3,
            blocks=BLOCKS,
        ),
        Version(
            4,
            "stencil_v4",
            "constant taps read in a per-lane order: serialised",
            stencil_v4,
            blocks=BLOCKS,
        ),
    ),
    ref=stencil_ref,
    make_inputs=make_inputs,
    check_sizes=((1,), (4,), (9,), (31,), (257,), (4099,), (65537,), (1_000_003,)),
    bench_size=(2**28,),  # as the copy kernel: the launch cost is a small part
    bytes_moved=lambda size: 2 * 4 * size[0],  # x read once, out written once
    tolerance=1e-5,  # nine float32 products summed: rounding, and FMA on the GPU
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
