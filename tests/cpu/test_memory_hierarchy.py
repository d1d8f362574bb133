"""B6 on the CPU backend: the strided gather at every stride, constant memory set
from the host (thousand.cuda.set_constant), the NumPy references against loops, the
sector arithmetic of the b6-strides experiment, and clear errors for bad input."""

import numpy as np
import pytest

from thousand import cpu
from thousand.cuda import cdiv, launch, set_constant, to_device
from thousand.experiments.b6_registers import warps_allowed
from thousand.experiments.b6_strides import sector_efficiency, sectors_per_warp
from thousand.kernels.stencil import K, R, stencil, stencil_ref
from thousand.kernels.strided import strided, strided_ref

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")
rng = np.random.default_rng(6)


def test_strided_ref_against_a_loop():
    x = rng.standard_normal(50, dtype=np.float32)
    for stride in (1, 3, 7, 49, 50, 80):
        loop = [x[i * stride] for i in range(50) if i * stride < 50]
        np.testing.assert_array_equal(strided_ref(x, stride), np.array(loop))
    np.testing.assert_array_equal(strided_ref(x, 2, 4), x[[0, 2, 4, 6]])


def test_stencil_ref_against_loops():
    x = rng.standard_normal(13, dtype=np.float32)
    taps = rng.standard_normal(K, dtype=np.float32)
    loop = np.zeros(13)
    for i in range(13):
        for k in range(K):
            if 0 <= i + k - R < 13:
                loop[i] += float(taps[k]) * float(x[i + k - R])
    np.testing.assert_allclose(stencil_ref(x, taps), loop, rtol=1e-6)
    # one tap set to 1 shifts the signal: taps[R + d] = 1 gives out[i] = x[i + d]
    shift = np.zeros(K, np.float32)
    shift[R + 2] = 1
    np.testing.assert_array_equal(stencil_ref(x, shift), np.append(x[2:], [0, 0]))


@pytest.mark.parametrize("stride", [1, 2, 3, 8, 33, 64])
@pytest.mark.parametrize("length", [1, 64, 1000, 4099])
def test_strided_every_stride(stride, length):
    x = rng.standard_normal(length, dtype=np.float32)
    np.testing.assert_array_equal(strided(x, stride=stride), strided_ref(x, stride))
    n = cdiv(length, stride) // 2
    np.testing.assert_array_equal(strided(x, stride=stride, n=n), x[::stride][:n])


def test_strided_into_an_output_on_the_device():
    x = to_device(np.arange(100, dtype=np.float32))
    out = to_device(np.full(10, np.nan, np.float32))
    strided(x, out=out, stride=9)
    np.testing.assert_array_equal(out.get(), np.arange(0, 90, 9, dtype=np.float32))


def _taps_now(n=40):
    """What stencil_v2 computes from whatever stencil_taps holds: launched directly,
    not through its launcher (which sets the taps itself)."""
    x = np.zeros(n, np.float32)
    x[n // 2] = 1  # an impulse: out around n/2 is the taps, reversed
    dx, d_out = to_device(x), to_device(np.full(n, np.nan, np.float32))
    launch("stencil", "stencil_v2", (1,), (64,), dx, d_out, np.int32(n))
    return d_out.get()[n // 2 - R : n // 2 + R + 1][::-1]


def test_set_constant_is_what_the_kernel_reads():
    for _ in range(2):  # twice: the second values replace the first
        taps = rng.standard_normal(K, dtype=np.float32)
        set_constant("stencil", "stencil_taps", taps, dtype=np.float32)
        np.testing.assert_array_equal(_taps_now(), taps)
    from_device = to_device(np.arange(K, dtype=np.float32))
    set_constant("stencil", "stencil_taps", from_device)
    np.testing.assert_array_equal(_taps_now(), np.arange(K, dtype=np.float32))


def test_set_constant_reaches_both_builds():
    taps = rng.standard_normal(K, dtype=np.float32)
    with cpu.checked_mode(False):
        set_constant("stencil", "stencil_taps", taps)
        fast = _taps_now()
    checked = _taps_now()  # this module's fixture: the checked build
    np.testing.assert_array_equal(fast, taps)
    np.testing.assert_array_equal(checked, taps)


@pytest.mark.parametrize(
    "symbol,values,dtype,message",
    [
        (
            "no_such",
            np.zeros(K, np.float32),
            None,
            "no __constant__ variable 'no_such'",
        ),
        ("stencil_taps", np.zeros(K - 1, np.float32), None, "holds 36 bytes; got 32"),
        (
            "stencil_taps",
            np.zeros(K, np.float64),
            np.float32,
            "is float32, got float64",
        ),
        ("stencil_taps", list(range(K)), None, "must be a numpy.ndarray"),
        ("stencil_taps", np.zeros((K, 2), np.float32)[:, 0], None, "C-contiguous"),
    ],
)
def test_set_constant_refuses_what_does_not_fit(symbol, values, dtype, message):
    with pytest.raises(ValueError, match=message):
        set_constant("stencil", symbol, values, dtype=dtype)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: strided(np.zeros(8, np.float32), stride=0), "at least 1"),
        (lambda: strided(np.zeros(8, np.float32), stride=1.5), "an integer"),
        (lambda: strided(np.zeros(8, np.float32), stride=3, n=4), "read x\\[9\\]"),
        (lambda: strided(np.zeros(8, np.float32), n=-1), "whole number"),
        (
            lambda: strided(np.zeros(8, np.float32), out=np.zeros(2, np.float32), n=3),
            "n = 3 but `out` has 2",
        ),
        (lambda: strided(np.zeros(8, np.float64)), "float32"),
        (lambda: stencil(np.zeros(8, np.float32), np.zeros(8, np.float32)), "(9,)"),
        (
            lambda: stencil(np.zeros((2, 4), np.float32), np.zeros(K, np.float32)),
            "1-D",
        ),
    ],
)
def test_bad_input_is_rejected(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_sector_arithmetic():
    # 32 lanes x 4 bytes x stride, in 32-byte sectors: 4 at stride 1, 32 from 8 on
    assert [sectors_per_warp(s) for s in (1, 2, 3, 4, 5, 8, 64)] == [
        4,
        8,
        12,
        16,
        20,
        32,
        32,
    ]
    assert [sector_efficiency(s) for s in (1, 2, 4, 8, 64)] == [1, 0.5, 0.25, 0.125] + [
        0.125
    ]


def test_register_limit_on_warps():
    # 65,536 registers per SM, 8-register steps per thread, at most 64 warps
    assert warps_allowed(32) == 64
    assert warps_allowed(33) == 51  # 40 registers a thread: 1,280 a warp
    assert warps_allowed(128) == 16
    assert warps_allowed(255) == 8
