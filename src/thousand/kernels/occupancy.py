"""Occupancy: the same copy, limited by shared memory or by registers (B4).

python -m thousand.kernels.occupancy     # check every version, then time it
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
    on_cpu,
    shared_memory_optin,
)
from thousand.kernels.family import Family, Version, pick

OP = "occupancy"
ILP = 64  # as in occupancy.cu: elements per thread of v2 and v3
FLOAT = 4  # bytes


def occupancy_ref(x: np.ndarray) -> np.ndarray:
    return x.copy()


def shared_limit() -> int:
    """The largest dynamic shared memory a block may ask for once it opts in."""
    if on_cpu():
        from thousand.cpu.build import MAX_DYNAMIC_SHARED

        return MAX_DYNAMIC_SHARED
    return shared_memory_optin()


def _copy(name, x, out, block, per_thread, shared):
    check_array(OP, "x", x, ndim=1)
    if out is not None:
        check_array(OP, "out", out, ndim=1)
        check_shape(OP, "out", out, x.shape)
    check_block(OP, (block,))
    n = x.shape[0]
    stage = Staging(OP, x)
    (dx,) = stage.inputs()
    d_out = stage.output(out, x.shape)
    if n:
        grid = (cdiv(n, block * per_thread),)
        launch(OP, name, grid, (block,), dx, d_out, np.int32(n), shared=shared)
    return stage.result(d_out, out)


# --8<-- [start:launchers]
def _footprint(shared, need: int) -> int:
    """Dynamic shared memory per block: `need` bytes by default, never less."""
    shared = need if shared is None else shared
    whole = isinstance(shared, (int, np.integer)) and not isinstance(shared, bool)
    if not (whole and need <= shared <= shared_limit()):
        raise ValueError(
            f"{OP}: `shared` must be whole bytes from {need} to {shared_limit()}, "
            f"got {shared!r}"
        )
    return int(shared)


def occupancy_v1(x, out=None, block=256, shared=None):
    """`shared`: the block's shared-memory footprint in bytes; at least (and by
    default) the one float per thread the copy passes through."""
    (block,) = check_block(OP, block, ndim=1)  # an int before it sizes anything
    shared = _footprint(shared, block * FLOAT)
    return _copy("occupancy_v1", x, out, block, 1, shared)


# v2 and v3 use no shared memory; a `shared` footprint is only reserved, as if the
# kernel also kept a tile there: it lowers occupancy and changes nothing else.
def occupancy_v2(x, out=None, block=256, shared=None):
    """ILP elements per thread, ILP registers of data per thread."""
    return _copy("occupancy_v2", x, out, block, ILP, _footprint(shared, 0))


def occupancy_v3(x, out=None, block=256, shared=None):
    """v2's code, compiled to fit 1024-thread blocks: it spills."""
    return _copy("occupancy_v3", x, out, block, ILP, _footprint(shared, 0))


# --8<-- [end:launchers]


def occupancy(x, out=None, version=1, block=256, shared=None):
    return pick(FAMILY, version)(x, out=out, block=block, shared=shared)


def make_inputs(rng, size):
    return (rng.standard_normal(size[0], dtype=np.float32),)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "occupancy_v1",
            "one float per thread, a shared-memory footprint that sets blocks/SM",
            occupancy_v1,
            blocks=(32, 256, 1024),
        ),
        Version(
            2,
            "occupancy_v2",
            "64 floats per thread in registers: fewer warps, more loads in flight",
            occupancy_v2,
            blocks=(32, 256, 512),  # its registers allow no 1024-thread block
        ),
        Version(
            3,
            "occupancy_v3",
            "v2 under __launch_bounds__(1024): 64 registers, the rest spilled",
            occupancy_v3,
            blocks=(32, 256, 1024),
        ),
    ),
    ref=occupancy_ref,
    make_inputs=make_inputs,
    check_sizes=((1,), (5,), (1023,), (65541,), (1_000_003,)),
    bench_size=(2**28,),
    bytes_moved=lambda size: 2 * FLOAT * size[0],
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
