"""Launch helpers shared by track A's layer kernels: elementwise work over an M x N
matrix (with, optionally, a bias of N values) and the factory of such families.

These kernels take one thread per element, so the grid is a 1-D cover of M * N.
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version


def launch_matrix(op: str, name: str, inputs: dict, out, block: int):
    """Check, stage and launch `name(in_0, ..., out, M, N)`.

    `inputs` maps each argument's name to its array, in the kernel's order: the
    first is M x N and sets the shape; each later one is M x N too, or 1-D of N
    values (a bias, one per column).
    """
    arrays = list(inputs.items())
    first_name, first = arrays[0]
    check_array(op, first_name, first, ndim=2)
    M, N = first.shape
    for arg, a in arrays[1:]:
        check_array(op, arg, a, ndim=a.ndim if a.ndim in (1, 2) else 2)
        check_shape(op, arg, a, (N,) if a.ndim == 1 else (M, N))
    if out is not None:
        check_array(op, "out", out, ndim=2)
        check_shape(op, "out", out, (M, N))
    check_block(op, (block,))
    stage = Staging(op, *(a for _, a in arrays))
    d_in = stage.inputs()
    d_out = stage.output(out, (M, N))
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
