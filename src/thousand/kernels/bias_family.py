"""The families of bias_add and the bias + activation kernels: a bias of N values
added to each row of an M x N matrix Z, then, as each kernel says, an activation.

They differ only in their kernel, their reference and their tolerance; the inputs,
the argument names and the bytes moved are written here once.
"""

from __future__ import annotations

import numpy as np

from thousand.kernels.family import Family
from thousand.kernels.layer_launch import matrix_family


def bias_inputs(rng, size):
    """A bias family's inputs at size (M, N): Z, M x N, and b, N values; normal."""
    M, N = size
    return (
        rng.standard_normal((M, N), dtype=np.float32),
        rng.standard_normal(N, dtype=np.float32),
    )


def bias_family(op, teaches, ref, *, tolerance) -> Family:
    """A matrix_family of `op(Z, b)`: a bias of N values added to each row of the
    M x N matrix Z (then, as the kernel says, an activation). It reads Z and b and
    writes Z's shape."""
    return matrix_family(
        op,
        teaches,
        ref,
        bias_inputs,
        ("Z", "b"),
        bytes_moved=lambda size: 4 * (2 * size[0] * size[1] + size[1]),
        tolerance=tolerance,
    )
