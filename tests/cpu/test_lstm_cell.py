"""A7's family: the reference against exact rational arithmetic, and bad input
rejected before any launch. The kernels themselves run in the generic tests,
which find every family by itself: tests/cpu/test_emulated_kernels.py on the CPU
backend, tests/gpu/test_kernels.py on a GPU."""

# TODO(scaffold): test your reference against an independent oracle (closed forms,
# float64 loops, finite differences), then delete this comment.

from fractions import Fraction

import numpy as np
import pytest

from thousand.kernels.lstm_cell import A, lstm_cell, lstm_cell_ref

rng = np.random.default_rng(1)
f32 = np.ones(8, dtype=np.float32)


def test_ref_is_the_exact_value_rounded_once():
    # Fractions are exact; float() rounds them correctly to float64.
    x, y = rng.standard_normal((2, 257), dtype=np.float32)
    a = Fraction(float(np.float32(A)))
    exact = [
        float(a * Fraction(float(u)) + Fraction(float(v)))
        for u, v in zip(x, y, strict=True)
    ]
    np.testing.assert_array_equal(lstm_cell_ref(x, y), exact)


def test_ref_closed_forms():
    x, y = rng.standard_normal((2, 31), dtype=np.float32)
    y_only = lstm_cell_ref(x, y, a=0.0)  # 0 * x + y
    np.testing.assert_array_equal(y_only, y)
    ones, zeros = np.ones(5, np.float32), np.zeros(5, np.float32)
    a_only = lstm_cell_ref(ones, zeros, a=-3.0)  # a * 1 + 0
    np.testing.assert_array_equal(a_only, -3.0)


@pytest.mark.parametrize(
    "x,y,kwargs,message",
    [
        (f32.astype(np.float64), f32, {}, "`x` must be float32, got float64"),
        (f32, np.ones(9, np.float32), {}, "`y` must have shape (8,)"),
        (f32, f32, {"a": "2"}, "`a` must be a real number, got str"),
        (f32, f32, {"block": 2048}, "CUDA allows at most 1024"),
        (f32, f32, {"version": 9}, "no version 9; versions are [1, 2]"),
    ],
)
def test_bad_input_is_rejected(x, y, kwargs, message):
    with pytest.raises(ValueError) as info:
        lstm_cell(x, y, **kwargs)
    assert message in str(info.value)
