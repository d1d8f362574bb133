"""Launch helpers shared by track A's layer kernels: elementwise work over an M x N
matrix (with, optionally, a bias of N values) and the factory of such families.

These kernels take one thread per element, so the grid is a 1-D cover of M * N.
"""

from __future__ import annotations

import inspect

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
from thousand.kernels.family import Family, Version


def launch_matrix(op: str, name: str, inputs: dict, out, block: int):
    """Check, stage and launch `name(in_0, ..., out, M, N)`.

    `inputs` maps each argument's name to its array, in the kernel's order. The
    first sets the shape: its last axis has N values (the columns, or a
    convolution's channels), the axes before it M rows in all (a batch, or the
    batch's pixels). Each later input has the same shape, or is 1-D of N values (a
    bias, one per column or channel). Elementwise: `out` may be the first input
    itself (in place).
    """
    arrays = list(inputs.items())
    first_name, first = arrays[0]
    if not hasattr(first, "ndim"):  # a list: check_array says what it wants
        check_array(op, first_name, first, ndim=2)
    check_array(op, first_name, first, ndim=max(first.ndim, 2))
    shape = tuple(first.shape)
    N = shape[-1]
    M = int(np.prod(shape[:-1]))
    for arg, a in arrays[1:]:
        want = (N,) if getattr(a, "ndim", None) == 1 else shape
        check_array(op, arg, a, ndim=len(want))
        check_shape(op, arg, a, want)
    if out is not None:
        check_array(op, "out", out, ndim=len(shape))
        check_shape(op, "out", out, shape)
    check_block(op, block, ndim=1)
    stage = Staging(op, *(a for _, a in arrays), names=tuple(inputs))
    d_in = stage.inputs()
    d_out = stage.output(out, shape, in_place_ok=True)
    if M and N:
        grid = (cdiv(M * N, block),)
        launch(op, name, grid, (block,), *d_in, d_out, np.int32(M), np.int32(N))
    return stage.result(d_out, out)


def matrix_family(
    op, teaches, ref, make_inputs, arg_names, *, bytes_moved, tolerance=0.0
) -> Family:
    """A one-version family of an elementwise M x N kernel named `<op>_v1`, whose
    inputs are called `arg_names` (in the kernel's order)."""

    def run(*inputs, out=None, block=256):
        if len(inputs) != len(arg_names):
            raise TypeError(f"{op}: takes {', '.join(arg_names)}")
        named = dict(zip(arg_names, inputs, strict=True))
        return launch_matrix(op, f"{op}_v1", named, out, block)

    run.__name__ = f"{op}_v1"
    # help() and tests see the inputs' names, not *inputs
    P = inspect.Parameter
    run.__signature__ = inspect.Signature(
        [P(a, P.POSITIONAL_OR_KEYWORD) for a in arg_names]
        + [
            P("out", P.KEYWORD_ONLY, default=None),
            P("block", P.KEYWORD_ONLY, default=256),
        ]
    )
    return Family(
        name=op,
        versions=(Version(1, f"{op}_v1", teaches, run, blocks=(64, 256)),),
        ref=ref,
        make_inputs=make_inputs,
        # (M, N): a single element, primes, a ragged edge on every block size
        check_sizes=((1, 1), (3, 7), (37, 10), (257, 129), (1000, 101)),
        bench_size=(8192, 8192),
        bytes_moved=bytes_moved,
        tolerance=tolerance,
    )


# Scratch buffers of the launchers that run more than one kernel (im2col + GEMM),
# kept between calls so that a timed call measures kernels, not cudaMalloc.
_scratch: dict = {}


def scratch(op: str, name: str, shape: tuple):
    """A device array of `shape`, carved from a buffer kept for (op, name) that
    grows when a call needs more."""
    from thousand.cuda import backend, empty

    check_index_range(op, f"the scratch buffer `{name}`", *shape)  # before allocating
    n = int(np.prod(shape))
    key = (backend(), op, name)
    have = _scratch.get(key)
    if have is None or have.shape[0] < n:
        have = _scratch[key] = empty((max(n, 1),), np.float32)
    view = have[:n]
    # (a 1-D shape needs no reshape, which the CPU backend refuses for empty views)
    return view if tuple(shape) == (n,) else view.reshape(shape)


_counters: dict = {}  # (backend, op) -> uint32 counters, every one 0 between launches


def counters(op: str, n: int):
    """`n` device counters for `op`'s kernels whose last block to finish merges
    the others' partial results (it knows it is last by an atomicAdd on its
    counter, and sets the counter back to 0 before it ends)."""
    from thousand.cuda import backend, to_device

    key = (backend(), op)
    have = _counters.get(key)
    if have is None or have.shape[0] < n:
        have = _counters[key] = to_device(np.zeros(n, np.uint32))
    return have[:n]


def forget_counters(op: str) -> None:
    """After a launch of `op` that failed: its counters may not be back at 0."""
    from thousand.cuda import backend

    _counters.pop((backend(), op), None)
