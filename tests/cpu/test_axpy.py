"""axpy (B2): the reference against exact rational arithmetic, the kernels on a case
where rounding twice goes wrong, in-place updates, and bad input refused."""

from fractions import Fraction

import numpy as np
import pytest

from thousand.cuda import to_device
from thousand.kernels.axpy import axpy, axpy_ref

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")
rng = np.random.default_rng(7)

# a * x + y where the float64 sum lands exactly halfway between two float32s:
# a = 1 + 2^-15, x = 2^-24 (1 - 2^-15), so a * x = 2^-24 - 2^-54 exactly, and
# y = 1 + 2^-23. The exact sum is just below the float32 midpoint 1 + 3 * 2^-24, so
# rounding it once gives 1 + 2^-23; rounding it to float64 first lands on the
# midpoint, and the tie then goes to the even neighbour, 1 + 2^-22.
HALF_A = np.float32(1 + 2**-15)
HALF_X = np.array([2**-24 * (1 - 2**-15)], np.float32)
HALF_Y = np.array([1 + 2**-23], np.float32)
ONCE = np.float32(1 + 2**-23)


def round_to_float32(v: Fraction) -> np.float32:
    """The float32 nearest to v, ties to the even significand: by exact comparison."""
    guess = np.float32(float(v))
    near = [np.nextafter(guess, np.float32(-np.inf)), guess]
    near.append(np.nextafter(guess, np.float32(np.inf)))

    def key(c):
        return abs(Fraction(float(c)) - v), int(c.view(np.uint32)) & 1

    return min(near, key=key)


def exact_axpy(a, x, y) -> np.ndarray:
    fa = Fraction(float(np.float32(a)))
    return np.array(
        [
            round_to_float32(fa * Fraction(float(u)) + Fraction(float(w)))
            for u, w in zip(x, y, strict=True)
        ],
        np.float32,
    )


def test_ref_rounds_once_like_exact_arithmetic():
    n = 3000
    # magnitudes spread over many binades, so the sums cancel and carry
    x = (rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)).astype(np.float32)
    y = (rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)).astype(np.float32)
    for a in (0.7, -3.3e-5, 1 + 2**-23):
        np.testing.assert_array_equal(axpy_ref(a, x, y), exact_axpy(a, x, y))


def test_ref_fixes_the_double_rounding_case():
    twice = (np.float64(HALF_A) * HALF_X.astype(np.float64) + HALF_Y).astype(np.float32)
    assert twice[0] == np.float32(1 + 2**-22)  # the wrong answer the fix is for
    assert exact_axpy(HALF_A, HALF_X, HALF_Y)[0] == ONCE
    assert axpy_ref(HALF_A, HALF_X, HALF_Y)[0] == ONCE


@pytest.mark.parametrize("version", [1, 2])
def test_kernels_round_once(version):
    # 5 elements: v2 does one float4 and one element of scalar tail
    x, y = np.repeat(HALF_X, 5), np.repeat(HALF_Y, 5)
    out = axpy(HALF_A, x, y, version=version)
    np.testing.assert_array_equal(out, np.full(5, ONCE))


@pytest.mark.parametrize("version", [1, 2])
def test_in_place_on_the_device_and_on_the_host(version):
    x = rng.standard_normal(1001, dtype=np.float32)
    y = rng.standard_normal(1001, dtype=np.float32)
    expected = axpy_ref(-2.5, x, axpy_ref(-2.5, x, y))
    dx, dy = to_device(x), to_device(y)
    for _ in range(2):
        assert axpy(-2.5, dx, dy, out=dy, version=version) is dy
    np.testing.assert_array_equal(dy.get(), expected)
    h = y.copy()
    for _ in range(2):
        assert axpy(np.float64(-2.5), x, h, out=h, version=version) is h
    np.testing.assert_array_equal(h, expected)


F32 = np.ones(8, np.float32)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: axpy(F32, F32, F32), "`a` must be a real number"),
        (lambda: axpy(True, F32, F32), "`a` must be a real number"),
        (lambda: axpy(2.0, F32.astype(np.float64), F32), "`x` must be float32"),
        (lambda: axpy(2.0, F32, np.ones(9, np.float32)), "`y` must have shape (8,)"),
        (lambda: axpy(2.0, F32, F32, out=F32[:4]), "`out` must have shape (8,)"),
        (lambda: axpy(2.0, F32, F32, block=2048), "CUDA allows at most 1024"),
        (lambda: axpy(2.0, F32, F32, version=3), "no version 3; versions are [1, 2]"),
        (
            lambda: axpy(2.0, to_device(F32)[1:], to_device(F32)[1:], version=2),
            "not aligned to 16 bytes",
        ),
        (lambda: axpy(2.0, to_device(F32), F32), "inputs mix"),
    ],
)
def test_bad_input_is_rejected(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert message in str(info.value)
