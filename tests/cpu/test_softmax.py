"""The softmax and softmax_backward families: the references against independent
oracles (float64 loops with math.exp, closed forms, invariants, central finite
differences for the gradient), rows that break a naive softmax (1e30, -inf, a row
of -inf) through every version, inputs of other scales, in place, and long rows
past what softmax_v4 holds in registers. The generic tests run every version on
the family's sizes (tests/cpu/test_emulated_kernels.py)."""

import math

import numpy as np
import pytest

from thousand.cuda import to_device
from thousand.kernels.family import rel_error
from thousand.kernels.softmax import FAMILY, softmax, softmax_ref
from thousand.kernels.softmax_backward import FAMILY as BACKWARD
from thousand.kernels.softmax_backward import softmax_backward, softmax_backward_ref

rng = np.random.default_rng(1)
VERSIONS = [v.number for v in FAMILY.versions]
BACKWARD_VERSIONS = [v.number for v in BACKWARD.versions]
with_kernels = pytest.mark.usefixtures("cpu_backend_checked")


def softmax_loop(row) -> list[float]:
    """One row in float64, element by element: the textbook formula."""
    m = max(float(v) for v in row)
    e = [math.exp(float(v) - m) for v in row]
    total = math.fsum(e)
    return [t / total for t in e]


# ---- the reference ----


def test_ref_against_a_float64_loop():
    x = (rng.standard_normal((9, 37)) * 30).astype(np.float32)
    loop = np.array([softmax_loop(row) for row in x], np.float32)  # rounded once
    np.testing.assert_array_equal(softmax_ref(x), loop)


def test_ref_closed_forms():
    x = np.array(
        [
            [2.5] * 7,  # equal values: 1/7 each
            [math.log(3.0), 0.0, -np.inf, -np.inf, -np.inf, -np.inf, -np.inf],
            [1000.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # one dominant value
            [1e30, 1e30, -1e30, 0.0, 0.0, 0.0, 0.0],  # exp(1e30) would overflow
        ],
        np.float32,
    )
    expected = [
        [1 / 7] * 7,
        [0.75, 0.25, 0, 0, 0, 0, 0],  # e^ln3 / (e^ln3 + 1); -inf is masked out
        [1, 0, 0, 0, 0, 0, 0],
        [0.5, 0.5, 0, 0, 0, 0, 0],
    ]
    np.testing.assert_allclose(softmax_ref(x), expected, rtol=1e-7, atol=0)


def test_ref_rows_sum_to_one_and_ignore_a_shift():
    # multiples of 2^-10 under 8 in size: x + 64 is exact in float32
    x = (np.round(rng.standard_normal((20, 101)) * 1024) / 1024).astype(np.float32)
    y = softmax_ref(x)
    assert np.all(y > 0)
    np.testing.assert_allclose(y.astype(np.float64).sum(axis=1), 1.0, rtol=1e-6)
    shifted = x + np.float32(64.0)
    assert np.array_equal(shifted - np.float32(64.0), x)
    # softmax(x + c) = softmax(x): the same differences x - max, the same result
    np.testing.assert_array_equal(softmax_ref(shifted), y)


def test_ref_of_a_row_with_no_finite_max_is_nan():
    x = np.array(
        [[-np.inf] * 3, [np.inf, 0.0, 1.0], [np.nan, 0.0, 1.0], [0.0, 1.0, 2.0]],
        np.float32,
    )
    y = softmax_ref(x)
    assert np.isnan(y[:3]).all() and np.isfinite(y[3]).all()


# ---- every version on the rows that break a naive softmax ----

AWKWARD = np.array(
    [
        [1e30, 1e30, 0.0, -1e30],  # exp(1e30) overflows: 0.5, 0.5, 0, 0
        [-np.inf, 1.0, -np.inf, 1.0],  # masked positions: 0, 0.5, 0, 0.5
        [-np.inf, -np.inf, -np.inf, -np.inf],  # nothing finite: NaN, as NumPy
        [3.4e38, -3.4e38, 0.0, 0.0],  # x - max = -inf: e^-inf = 0, not NaN
        [np.inf, 0.0, 1.0, 2.0],  # inf - inf: NaN, as NumPy
        [0.0, np.nan, 1.0, 2.0],  # NaN in, NaN out
        [-np.inf, -np.inf, -np.inf, 5.0],  # the max last, after a run of -inf
    ],
    np.float32,
)


def same_with_nan(got, expected, atol):
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    ok = ~np.isnan(expected)
    np.testing.assert_allclose(got[ok], expected[ok], rtol=0, atol=atol)


@with_kernels
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("width", [1, 33, 4096, 4097])
def test_awkward_rows_through_every_version(version, width):
    """Each awkward row, with its values spread across `width` copies of the row's
    neighbours so that they land in different threads and warps."""
    x = np.repeat(AWKWARD, width, axis=1)  # (7, 4 * width)
    expected = softmax_ref(x)
    assert np.isnan(expected[[2, 4, 5]]).all()  # the rows NumPy makes NaN
    with np.errstate(invalid="ignore"):
        for block in (32, 512):
            same_with_nan(softmax(x, version=version, block=block), expected, 2e-7)


# ---- other scales than make_inputs' ----


@with_kernels
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("scale", [0.0, 1.0, 5.0])
def test_inputs_of_other_scales(version, scale):
    """Logits of N(0, scale^2): many terms of similar size in each sum. The error
    stays under FAMILY.tolerance (1e-6) at 4,097 columns; the longest rows add
    more rounding (v3 sums 2,048 terms per lane at 65,537 columns)."""
    for shape, tol in (((7, 4097), FAMILY.tolerance), ((2, 65537), 4e-6)):
        x = (rng.standard_normal(shape) * scale).astype(np.float32)
        got = softmax(x, version=version)
        assert rel_error(got, softmax_ref(x)) <= tol, (shape, scale)
        np.testing.assert_allclose(got.astype(np.float64).sum(axis=1), 1, rtol=1e-5)


@with_kernels
def test_v4_without_float4_loads_on_a_misaligned_buffer():
    """A device array 4 bytes into its buffer: 4 | cols, but rows are not on 16
    bytes, so v4 loads and stores floats one by one, and still gets it right."""
    rows, cols = 5, 4096
    x = (rng.standard_normal((rows, cols)) * 30).astype(np.float32)
    buffer = to_device(np.zeros(1 + 2 * rows * cols, np.float32))
    d_x = buffer[1 : 1 + rows * cols].reshape(rows, cols)
    d_x.set(x)
    d_y = buffer[1 + rows * cols :].reshape(rows, cols)
    softmax(d_x, out=d_y, version=4)
    assert rel_error(d_y.get(), softmax_ref(x)) <= FAMILY.tolerance


# ---- in place, empty, and blocks ----


@with_kernels
@pytest.mark.parametrize("version", VERSIONS)
def test_in_place_on_the_host_and_the_device(version):
    x = (rng.standard_normal((33, 4099)) * 30).astype(np.float32)
    expected = softmax_ref(x)
    h = x.copy()
    assert softmax(h, out=h, version=version, block=128) is h
    assert rel_error(h, expected) <= FAMILY.tolerance
    d = to_device(x)
    softmax(d, out=d, version=version, block=128)  # 4,099 > 8 * 128: v4's tail too
    assert rel_error(d.get(), expected) <= FAMILY.tolerance


@with_kernels
@pytest.mark.parametrize("version", VERSIONS)
def test_empty_matrices(version):
    assert softmax(np.zeros((0, 5), np.float32), version=version).shape == (0, 5)
    assert softmax(np.zeros((3, 0), np.float32), version=version).shape == (3, 0)


@pytest.mark.parametrize("version", VERSIONS)
def test_blocks_must_be_whole_warps(version):
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="needs whole warps, got a block of 48"):
        softmax(x, version=version, block=48)


def test_the_front_door_fits_v4s_block_to_the_row():
    """softmax(x) picks the fewest whole warps whose registers hold the row."""
    from unittest import mock

    from thousand.kernels import softmax as module

    for cols, block in ((1, 32), (512, 32), (513, 64), (4096, 256), (10**5, 1024)):
        x = np.zeros((0, cols), np.float32)  # nothing to launch: only the block
        with mock.patch.object(module, "_run", return_value=None) as run:
            module.softmax(x)
        assert run.call_args.args[3] == block, (cols, run.call_args)
    assert FAMILY.version(4).default_block == 256  # 256 x 16 = 4,096 columns


# ---- the backward pass ----


def test_backward_ref_against_central_differences():
    """dL/dx for L = sum(w * softmax(x)), each row in float64 loops: dy = w."""
    x = rng.standard_normal((3, 17)) * 3
    w = rng.standard_normal((3, 17))
    y = np.array([softmax_loop(row) for row in x])

    def loss(x_):
        return sum(
            math.fsum(wi * yi for wi, yi in zip(w[i], softmax_loop(x_[i]), strict=True))
            for i in range(3)
        )

    h = 1e-6
    fd = np.zeros_like(x)
    for i in range(3):
        for k in range(17):
            e = np.zeros_like(x)
            e[i, k] = h
            fd[i, k] = (loss(x + e) - loss(x - e)) / (2 * h)
    got = softmax_backward_ref(w, y)  # float64 inputs; the result rounded to float32
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)


def test_backward_ref_of_a_uniform_gradient_is_zero():
    """dy the same in every column: shifting all logits changes nothing."""
    y = softmax_ref(rng.standard_normal((4, 50)).astype(np.float32))
    dy = np.full((4, 50), 0.7, np.float32)
    # y sums to 1 only within float32 rounding, so s = 0.7 * sum(y) is close to 0.7
    np.testing.assert_allclose(softmax_backward_ref(dy, y), 0, atol=1e-7)


@with_kernels
@pytest.mark.parametrize("version", BACKWARD_VERSIONS)
def test_backward_in_place_into_either_input(version):
    dy, y = BACKWARD.make_inputs(rng, (33, 1025))
    expected = softmax_backward_ref(dy, y)
    for which in (0, 1):
        inputs = [to_device(dy), to_device(y)]
        softmax_backward(*inputs, out=inputs[which], version=version, block=64)
        assert rel_error(inputs[which].get(), expected) <= BACKWARD.tolerance


@with_kernels
@pytest.mark.parametrize("version", BACKWARD_VERSIONS)
def test_backward_after_the_forward_kernel(version):
    """The pair as training uses it: y from softmax v4, then dx from y."""
    x = (rng.standard_normal((16, 4096)) * 3).astype(np.float32)
    dy = rng.standard_normal((16, 4096), dtype=np.float32)
    y = softmax(x)
    got = softmax_backward(dy, y, version=version)
    assert rel_error(got, softmax_backward_ref(dy, y)) <= BACKWARD.tolerance


def test_backward_shapes_must_match():
    with pytest.raises(ValueError, match=r"`y` must have shape \(2, 3\)"):
        softmax_backward(np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32))
