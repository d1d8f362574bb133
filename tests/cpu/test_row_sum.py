"""B10's row_sum family: the reference against exact sums, the two storage orders of
its inputs, the front door's layouts, and bad input rejected before any launch. The
kernels themselves run in the generic tests (tests/cpu/test_emulated_kernels.py on
the CPU backend, tests/gpu/test_kernels.py on a GPU)."""

import math

import numpy as np
import pytest

from thousand.kernels.row_sum import (
    FAMILY,
    make_inputs,
    row_sum,
    row_sum_ref,
    row_sum_v1,
    row_sum_v2,
    row_sum_v3,
)

rng = np.random.default_rng(1)


def test_ref_is_the_exact_sum_rounded_once():
    a = rng.standard_normal((7, 301), dtype=np.float32)
    # math.fsum is exact; float32() then rounds it to nearest, once
    exact = [np.float32(math.fsum(map(float, row))) for row in a]
    np.testing.assert_array_equal(row_sum_ref(a), np.array(exact, np.float32))


def test_ref_of_rows_with_nothing_to_add():
    np.testing.assert_array_equal(row_sum_ref(np.zeros((3, 0), np.float32)), [0, 0, 0])


def test_the_two_inputs_are_one_matrix_in_two_orders():
    a, a_cm = make_inputs(rng, (5, 3))
    assert a.shape == (5, 3) and a_cm.shape == (3, 5)
    assert a.flags.c_contiguous and a_cm.flags.c_contiguous
    np.testing.assert_array_equal(a_cm.T, a)
    # element (i, k) of the matrix sits at k * rows + i in the column-major buffer
    assert a_cm.reshape(-1)[2 * 5 + 4] == a[4, 2]


def test_ref_refuses_a_column_major_copy_of_another_shape():
    a = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"a_cm must have shape \(3, 2\)"):
        row_sum_ref(a, np.ones((2, 3), np.float32))


@pytest.mark.usefixtures("cpu_backend_checked")
def test_every_version_through_the_front_door_gives_the_same_sums():
    a = rng.random((37, 45), dtype=np.float32)
    expected = row_sum_ref(a)
    f = np.asfortranarray(a)  # the same matrix stored column by column
    for got in (row_sum(a, version=1), row_sum(f, version=2), row_sum(a, version=3)):
        np.testing.assert_allclose(got, expected, rtol=1e-6)


@pytest.mark.usefixtures("cpu_backend_checked")
def test_no_columns_gives_zeros_without_a_launch():
    for v in (1, 3):
        out = row_sum(np.zeros((4, 0), np.float32), version=v)
        np.testing.assert_array_equal(out, [0, 0, 0, 0])


@pytest.mark.usefixtures("cpu_backend_checked")
def test_each_family_version_reads_the_layout_it_was_written_for():
    a, a_cm = make_inputs(rng, (9, 33))
    junk_a, junk_cm = np.full_like(a, np.nan), np.full_like(a_cm, np.nan)
    for v in FAMILY.versions:
        args = (junk_a, a_cm) if v.number == 2 else (a, junk_cm)
        np.testing.assert_allclose(v.run(*args), row_sum_ref(a), rtol=1e-6)


f32 = np.ones((4, 6), dtype=np.float32)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: row_sum(f32.T), "`a` must be C-contiguous"),
        (lambda: row_sum(f32[:, ::2], version=1), "`a` must be C-contiguous"),
        (lambda: row_sum(f32, version=2), "pass a NumPy array in Fortran order"),
        (lambda: row_sum_v2(np.asfortranarray(f32)), "`a_cm` must be C-contiguous"),
        (lambda: row_sum(f32.astype(np.float64)), "`a` must be float32, got float64"),
        (lambda: row_sum(np.ones(6, np.float32)), "`a` must be 2-D"),
        (lambda: row_sum_v3(f32, block=48), "needs whole warps, got a block of 48"),
        (lambda: row_sum_v1(f32, block=2048), "CUDA allows at most 1024"),
        (
            lambda: row_sum_v1(f32, out=np.ones(6, np.float32)),
            "`out` must have shape (4,)",
        ),
        (lambda: row_sum(f32, version=4), "no version 4; versions are [1, 2, 3]"),
    ],
)
def test_bad_input_is_rejected(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert message in str(info.value)
