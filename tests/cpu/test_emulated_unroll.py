"""The column sums of B8 on the CPU backend (checked build) at every K, their
reference against independent oracles, the errors bad input gets, and the .cu and
.py agreeing on K. The GPU layer runs the same cases (tests/gpu/test_unroll.py)."""

import math
import re

import numpy as np
import pytest

from tests.unroll_cases import ANY_K, COLUMNS, ROWS, check
from thousand.cuda import source_path
from thousand.kernels.unroll import (
    FAMILY,
    V2_ROWS,
    V4_ROWS,
    reorder_bound,
    unroll,
    unroll_ref,
)


@pytest.mark.usefixtures("cpu_backend_checked")
@pytest.mark.parametrize("version", ANY_K, ids=lambda v: f"v{v}")
@pytest.mark.parametrize("k", ROWS)
def test_every_k(version, k):
    for n in COLUMNS:
        check(version, k, n)


def test_ref_adds_row_by_row_in_float32():
    x = np.random.default_rng(2).random((7, 5), dtype=np.float32)
    loop = []
    for j in range(5):
        acc = np.float32(0.0)
        for r in range(7):
            acc = np.float32(acc + x[r, j])  # one float32 rounding per add
        loop.append(acc)
    np.testing.assert_array_equal(unroll_ref(x), np.array(loop, np.float32))


def test_ref_is_within_the_bound_of_the_exact_sum():
    x = np.random.default_rng(3).random((32, 4099), dtype=np.float32)
    exact = np.array([math.fsum(col) for col in x.T.astype(np.float64)])
    err = np.abs(unroll_ref(x) - exact) / exact
    assert err.max() <= reorder_bound(32) / 2  # gamma_32: one order's bound


def test_v3_tolerance_is_the_bound_at_the_family_k():
    assert FAMILY.version(3).tolerance == reorder_bound(V2_ROWS)
    assert all(v.tolerance is None for v in FAMILY.versions if v.number != 3)


def test_cu_and_py_agree_on_k():
    source = source_path("unroll").read_text()
    assert re.search(rf"#define UNROLL_K {V2_ROWS}\b", source)
    cases = [int(c) for c in re.findall(r"case (\d+): acc = column_sum<\1>", source)]
    assert tuple(cases) == V4_ROWS


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: unroll(np.ones((15, 8), np.float32), version=2), "K = 16 rows"),
        (lambda: unroll(np.ones(8, np.float32)), "must be 2-D"),
        (lambda: unroll(np.ones((4, 8))), "must be float32, got float64"),
        (lambda: unroll(np.ones((8, 4), np.float32).T), "C-contiguous"),
        (
            lambda: unroll(np.ones((4, 8), np.float32), out=np.ones(4, np.float32)),
            r"`out` must have shape \(8,\)",
        ),
        (lambda: unroll(np.ones((4, 8), np.float32), block=2048), "at most 1024"),
        (lambda: unroll(np.ones((4, 8), np.float32), version=5), "no version 5"),
    ],
)
def test_bad_input_is_rejected(call, message):
    with pytest.raises(ValueError, match=message):
        call()
