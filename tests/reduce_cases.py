"""Shared by the GPU and CPU layers: the operators, sizes and checks that take the
reduction beyond its family's float32 sum."""

import numpy as np

from thousand.kernels.reduce import MAX, SUM, Operator

# A user's operator: the largest magnitude (the infinity norm), written in C.
ABSMAX = Operator(
    "absmax", "fmax(fabs(a), fabs(b))", 0.0, lambda v: float(np.abs(v).max())
)
OPS = [SUM, MAX, ABSMAX]
SIZES = [1, 2, 3, 33, 1023, 1025, 65537, 2**20 + 7]
# Relative to sum |x|: float32 and float64 sums in any order of additions.
SUM_TOLERANCE = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-13}


def inputs(n: int, dtype, seed: int) -> np.ndarray:
    """Signed values: max must see negatives, absmax must take magnitudes."""
    return np.random.default_rng(seed).standard_normal(n).astype(dtype)


def check(out, x: np.ndarray, op: Operator) -> None:
    out = out.get() if hasattr(out, "get") and not isinstance(out, np.ndarray) else out
    assert out.shape == (1,) and out.dtype == x.dtype
    exact = op.numpy(x.astype(np.float64))
    if op is SUM:
        bound = SUM_TOLERANCE[x.dtype] * max(np.abs(x).sum(dtype=np.float64), 1.0)
        assert abs(out[0] - exact) <= bound, (op.name, out[0], exact)
    else:  # max and absmax pick an element: exact
        assert out[0] == exact, (op.name, out[0], exact)
