"""The gelu and gelu_backward families: the references against independent
oracles (math.tanh and math.erf element by element, closed forms, the complex-step
derivative and float64 central differences for the gradient), awkward values
through every version, in place, and bad input. The generic tests run every version
on the family's sizes (tests/cpu/test_emulated_kernels.py)."""

import cmath
import math

import numpy as np
import pytest

from thousand.cuda import to_device
from thousand.kernels.family import rel_error
from thousand.kernels.gelu import FAMILY, gelu, gelu_ref
from thousand.kernels.gelu_backward import FAMILY as BACKWARD
from thousand.kernels.gelu_backward import (
    gelu_backward,
    gelu_backward_ref,
    gelu_grad_ref,
)

rng = np.random.default_rng(7)
with_kernels = pytest.mark.usefixtures("cpu_backend_checked")


def gelu_scalar(x: float) -> float:
    """The tanh form as Hendrycks & Gimpel write it, one Python float at a time."""
    return 0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


# ---- the references ----


def test_ref_against_a_scalar_loop():
    x = (rng.standard_normal(2001) * 4).astype(np.float32)
    loop = np.array([gelu_scalar(float(v)) for v in x], np.float32)  # rounded once
    # One float32 rounding apart at most: where 1 + tanh(u) cancels (x < -3), the
    # float64 values themselves differ in their last bits (NumPy's x**3 and tanh)
    np.testing.assert_allclose(gelu_ref(x), loop, rtol=1.2e-7, atol=1e-15)


def test_ref_closed_forms_and_limits():
    x = np.array([0.0, -0.0, 30.0, -30.0, 1e-30, 1.0], np.float32)
    y = gelu_ref(x)
    assert y[0] == 0 and y[1] == 0
    assert y[2] == np.float32(30) and y[3] == 0  # tanh saturates: x and 0
    assert y[4] == np.float32(0.5e-30)  # gelu(x) ~ x / 2 near 0
    np.testing.assert_allclose(y[5], 0.8411920, rtol=1e-7)  # 0.5 (1 + tanh(0.8297))


def test_ref_is_close_to_the_erf_form():
    """The tanh form approximates x * Phi(x) (the exact GELU) to within 5e-4."""
    x = np.linspace(-8, 8, 4001)
    exact = np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x])
    assert np.abs(gelu_ref(x).astype(np.float64) - exact).max() < 5e-4


def test_derivative_against_the_complex_step():
    """f'(x) = Im f(x + ih) / h with h = 1e-20: no difference is taken, so it is
    exact to float64 rounding; tanh of a complex number is cmath's, not NumPy's."""
    h = 1e-20
    for x in np.linspace(-7, 7, 701):
        z = complex(x, h)
        f = 0.5 * z * (1 + cmath.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3)))
        assert abs(gelu_grad_ref(np.array([x]))[0] - f.imag / h) < 1e-14, x


def test_derivative_against_central_differences():
    x = rng.standard_normal(500) * 3
    h = 1e-5
    fd = [(gelu_scalar(v + h) - gelu_scalar(v - h)) / (2 * h) for v in x]
    np.testing.assert_allclose(gelu_grad_ref(x), fd, rtol=0, atol=1e-9)


def test_backward_ref_is_dy_times_the_derivative():
    dy, x = BACKWARD.make_inputs(rng, (999,))
    expected = (dy.astype(np.float64) * gelu_grad_ref(x)).astype(np.float32)
    np.testing.assert_array_equal(gelu_backward_ref(dy, x), expected)
    assert gelu_grad_ref(np.array([0.0]))[0] == 0.5  # 0.5 (1 + tanh 0) + 0


# ---- the kernels ----


@with_kernels
@pytest.mark.parametrize("version", [v.number for v in FAMILY.versions])
def test_awkward_values_in_place(version):
    x = FAMILY.make_inputs(rng, (1027,))[0]
    x[-3:] = [1e20, -1e20, 88.0]  # x^3 overflows float32: tanh(inf) = 1
    d = to_device(x)
    gelu(d, out=d, version=version)
    got = d.get()
    assert got[-3] == np.float32(1e20) and got[-2] == 0  # x, and -0 or 0
    assert got[-1] == np.float32(88) and got[0] == 0
    assert rel_error(got[:-3], gelu_ref(x[:-3])) <= FAMILY.tolerance


@with_kernels
@pytest.mark.parametrize("version", [v.number for v in BACKWARD.versions])
def test_backward_in_place_over_dy(version):
    dy, x = BACKWARD.make_inputs(rng, (1025,))
    d = to_device(dy)
    gelu_backward(d, to_device(x), out=d, version=version)
    ref = gelu_backward_ref(dy, x)
    assert np.abs(d.get() - ref).max() <= BACKWARD.tolerance * np.abs(ref).max()


@with_kernels
def test_bad_input_is_refused():
    x = np.ones(8, np.float32)
    with pytest.raises(ValueError, match="`x` must be float32, got float64"):
        gelu(x.astype(np.float64))
    with pytest.raises(ValueError, match="`x` must be 1-D"):
        gelu(x.reshape(2, 4))
    with pytest.raises(ValueError, match="`x` must have shape \\(8,\\)"):
        gelu_backward(x, np.ones(9, np.float32))
    with pytest.raises(ValueError, match="not aligned to 16 bytes"):
        gelu(to_device(np.ones(9, np.float32))[1:], version=2)
    with pytest.raises(ValueError, match="`out` overlaps `x`"):
        d = to_device(np.ones(12, np.float32))
        gelu(d[:8], out=d[4:], version=2)
