"""clip_norm: gradient clipping by global norm, the norm and the scale in kernels.

python -m thousand.kernels.clip_norm  # check every version, time it
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from thousand.cuda import (
    Staging,
    cdiv,
    check_array,
    check_block,
    check_shape,
    empty,
    fill,
    is_device_array,
    launch,
)
from thousand.kernels.copy import copy
from thousand.kernels.family import Family, Version, pick

OP = "clip_norm"
MAX_NORM = 1.0  # what the checks use; their gradients have norms far above it
SUM_BLOCKS = 64  # blocks of the sum of squares: a grid-stride loop covers the rest


# --8<-- [start:ref]
def clip_norm_ref(*grads, max_norm=MAX_NORM):
    """In float64: every array scaled by min(1, max_norm / (||g|| + 1e-6)), ||g||
    the norm of all of them as one vector. Returns the first (the family's check)."""
    return clip_all_ref(*grads, max_norm=max_norm)[0]


def clip_all_ref(*grads, max_norm=MAX_NORM):
    norm = np.sqrt(sum(np.sum(np.asarray(g, np.float64) ** 2) for g in grads))
    s = min(1.0, max_norm / (norm + 1e-6))
    return [np.asarray(g, np.float64) * s for g in grads]


# --8<-- [end:ref]


def _check_max_norm(max_norm):
    if not isinstance(max_norm, Real) or isinstance(max_norm, bool) or not max_norm > 0:
        raise ValueError(
            f"{OP}: `max_norm` must be a positive real number, got {max_norm!r}"
        )


# --8<-- [start:launchers]
def clip_norm_v1(g, out=None, block=256, max_norm=MAX_NORM):
    """One array clipped by its own norm (the family's check); `out` may be g."""
    check_array(OP, "g", g, ndim=1)
    if out is not None:
        check_array(OP, "out", out, ndim=1)
        check_shape(OP, "out", out, g.shape)
    check_block(OP, (block,))
    _check_max_norm(max_norm)
    stage = Staging(OP, g, names=("g",))
    (d_g,) = stage.inputs()
    d_out = stage.output(out, g.shape, in_place_ok=True)
    sumsq = empty((1,), np.float32)
    fill(sumsq, 0.0)
    _sum_squares(d_g, sumsq, block)
    _scale(d_g, sumsq, max_norm, d_out, block)
    return stage.result(d_out, out)


def _sum_squares(d_g, sumsq, block):
    n = d_g.size
    if n:
        grid = (min(SUM_BLOCKS, cdiv(n, block)),)
        launch(OP, "clip_sum_squares", grid, (block,), d_g, sumsq, np.int32(n))


def _scale(d_g, sumsq, max_norm, d_out, block):
    n = d_g.size
    if n:
        launch(OP, "clip_norm_v1", (cdiv(n, block),), (block,), d_g, sumsq,
               np.float32(max_norm), d_out, np.int32(n))  # fmt: skip


_ZERO: dict = {}


def _zero():
    """One float 0 on the device, made once (per backend)."""
    from thousand.cuda import backend

    key = backend()
    if key not in _ZERO:
        _ZERO[key] = empty((1,), np.float32)
        fill(_ZERO[key], 0.0)
    return _ZERO[key]


def clip_global_norm(grads, max_norm, sumsq, block=256):
    """Clip device arrays `grads` in place by their global norm; `sumsq` is a
    one-float device array that receives the sum of squares (read it for ||g||).
    The host waits for nothing: two launches per array, in order on one stream."""
    if not isinstance(grads, list | tuple) or not grads:
        raise ValueError(f"{OP}: `grads` must be a non-empty list of device arrays")
    for k, d in enumerate(grads):
        if not is_device_array(d) or d.dtype != np.float32:
            raise ValueError(
                f"{OP}: grads[{k}] must be a float32 device array, got "
                f"{type(d).__name__}"
            )
    if not is_device_array(sumsq) or sumsq.shape != (1,):
        raise ValueError(f"{OP}: `sumsq` must be a device array of shape (1,)")
    _check_max_norm(max_norm)
    check_block(OP, (block,))
    copy(_zero(), out=sumsq)  # a launch, not a fill: a Replay repeats it
    for d in grads:
        _sum_squares(d, sumsq, block)
    for d in grads:
        _scale(d, sumsq, max_norm, d, block)
    return sumsq


# --8<-- [end:launchers]


def clip_norm(g, out=None, version=1, block=256, max_norm=MAX_NORM):
    """g scaled to a norm of at most `max_norm`."""
    return pick(FAMILY, version)(g, out=out, block=block, max_norm=max_norm)


def make_inputs(rng, size):
    (n,) = size
    return (rng.standard_normal(n, dtype=np.float32),)


def numpy_baseline(g):
    o = np.empty_like(g)

    def run():
        norm = np.sqrt(np.dot(g, g))
        return np.multiply(g, np.float32(min(1.0, MAX_NORM / (norm + 1e-6))), out=o)

    return run


def torch_baseline(g):
    """torch.nn.utils.clip_grad_norm_ on a copy (it clips in place)."""
    import torch

    p = torch.nn.Parameter(torch.empty_like(g))
    p.grad = torch.empty_like(g)

    def run():
        p.grad.copy_(g)
        torch.nn.utils.clip_grad_norm_([p], MAX_NORM)
        return p.grad

    return run


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "clip_norm_v1",
            "sum of squares by block trees and atomics, then one scale per element",
            clip_norm_v1,
            blocks=(32, 256, 1024),
        ),
    ),
    ref=clip_norm_ref,
    make_inputs=make_inputs,
    check_sizes=((1,), (3,), (257,), (4099,), (65537,)),
    bench_size=(2**24,),
    bytes_moved=lambda size: 4 * 3 * size[0],  # read g twice, write it once
    # the float32 sum of n squares in a different order: relative error ~1e-6
    tolerance=1e-5,
    helpers=("clip_sum_squares",),
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
