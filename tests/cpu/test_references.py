"""Each NumPy reference against an independent oracle: plain Python loops in
float64 (or float32 scalars where the reference claims float32 rounding), and
closed forms."""

import math

import numpy as np
import pytest

from tests.helpers import numpy_baseline
from thousand.kernels import all_families, rel_error
from thousand.kernels.copy import copy_ref
from thousand.kernels.matmul import matmul_ref
from thousand.kernels.matrix_add import matrix_add_ref
from thousand.kernels.neuron_layer import neuron_layer_ref
from thousand.kernels.sigmoid import sigmoid_ref
from thousand.kernels.vector_add import vector_add_ref

rng = np.random.default_rng(1)


def test_vector_add_ref_rounds_like_float32_scalars():
    x, y = rng.standard_normal((2, 257), dtype=np.float32)
    loop = [np.float32(a) + np.float32(b) for a, b in zip(x, y, strict=True)]
    np.testing.assert_array_equal(vector_add_ref(x, y), np.array(loop, np.float32))


def test_matrix_add_ref_against_loops():
    a, b = rng.standard_normal((2, 5, 7), dtype=np.float32)
    loop = [
        [np.float32(a[i, j]) + np.float32(b[i, j]) for j in range(7)] for i in range(5)
    ]
    np.testing.assert_array_equal(matrix_add_ref(a, b), np.array(loop, np.float32))


def test_copy_ref_is_a_new_array():
    x = rng.standard_normal(9, dtype=np.float32)
    out = copy_ref(x)
    np.testing.assert_array_equal(out, x)
    assert not np.shares_memory(out, x)


def test_sigmoid_ref_closed_forms():
    z = np.array([0.0, math.log(3.0), -math.log(3.0), 800.0, -800.0], dtype=np.float32)
    # sigma(0) = 1/2, sigma(ln 3) = 3/4, sigma(-ln 3) = 1/4, saturation at both ends
    expected = [0.5, 0.75, 0.25, 1.0, 0.0]
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(sigmoid_ref(z), expected, rtol=1e-7, atol=1e-300)


def test_sigmoid_ref_symmetry_and_derivative():
    z = rng.standard_normal(100)
    s = sigmoid_ref(z)
    np.testing.assert_allclose(s + sigmoid_ref(-z), 1.0, rtol=1e-12)
    h = 1e-6  # sigma' = sigma (1 - sigma), by central differences
    fd = (sigmoid_ref(z + h) - sigmoid_ref(z - h)) / (2 * h)
    np.testing.assert_allclose(fd, s * (1 - s), rtol=1e-6)


def test_matmul_ref_against_triple_loop():
    M, N, K = 4, 3, 5
    a = rng.standard_normal((M, K), dtype=np.float32)
    b = rng.standard_normal((K, N), dtype=np.float32)
    loop = [
        [sum(float(a[i, k]) * float(b[k, j]) for k in range(K)) for j in range(N)]
        for i in range(M)
    ]
    np.testing.assert_allclose(matmul_ref(a, b), loop, rtol=1e-12)


def test_neuron_layer_ref_against_loops():
    W = rng.standard_normal((3, 4), dtype=np.float32)
    x = rng.standard_normal(4, dtype=np.float32)
    b = rng.standard_normal(3, dtype=np.float32)
    loop = []
    for j in range(3):
        z = float(b[j]) + sum(float(W[j, k]) * float(x[k]) for k in range(4))
        loop.append(1.0 / (1.0 + math.exp(-z)))
    np.testing.assert_allclose(neuron_layer_ref(W, x, b), loop, rtol=1e-12)


@pytest.mark.parametrize("family", all_families(), ids=lambda f: f.name)
def test_inputs_are_what_the_launchers_accept(family):
    for size in family.check_sizes[:3]:
        for a in family.make_inputs(rng, size):
            # a flag (attention's `causal`), a geometry, a pair (H, W)
            if not isinstance(a, np.ndarray | np.generic):
                continue
            # float32, int32 for indices (class targets, token ids), bfloat16 for
            # the tensor-core rungs
            assert a.dtype.name in ("float32", "int32", "bfloat16"), a.dtype
            assert a.flags.c_contiguous


@pytest.mark.parametrize("family", all_families(), ids=lambda f: f.name)
def test_numpy_baseline_computes_the_same_thing(family):
    """The CPU baseline the benchmarks time must be the operation itself."""
    baseline = numpy_baseline(family)
    assert baseline is not None, (
        f"{family.name} has no NumPy baseline: define numpy_baseline(*inputs) in "
        f"src/thousand/kernels/{family.name}.py (the scaffold writes one), returning "
        "a function that computes into an output made once"
    )
    for size in family.check_sizes[:4]:
        inputs = family.make_inputs(rng, size)
        out = baseline(*inputs)()
        assert rel_error(out, family.ref(*inputs)) <= max(family.tolerance, 1e-5)
