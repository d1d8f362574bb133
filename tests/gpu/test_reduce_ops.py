"""Reduction beyond the ladder's float32 sum, on the GPU: max and a user-written
operator, float64 as well as float32, and sizes from 1 to 2^30, on every version."""

import numpy as np
import pytest

from tests.reduce_cases import OPS, SIZES, check, inputs
from thousand.kernels.reduce import FAMILY, MAX, SUM, reduce

pytestmark = pytest.mark.gpu

VERSIONS = [v.number for v in FAMILY.versions]


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: f"v{v}")
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
@pytest.mark.parametrize("n", SIZES)
def test_operator_dtype_size(op, dtype, version, n, record_property):
    record_property("kernel", f"reduce_v{version}")
    record_property("size", [n])
    record_property("block", f"{op.name} {np.dtype(dtype).name}")
    x = inputs(n, dtype, seed=n)
    check(reduce(x, version=version, op=op), x, op)


HUGE = 2**30  # 4 GiB of float32, 8 GiB of float64: uploaded once per type


@pytest.fixture(scope="module", params=[np.float32, np.float64], ids=["f32", "f64"])
def huge(request):
    from pycuda import gpuarray

    # Uniform in [0, 1) plus a few planted extremes, so max has one right answer.
    x = np.random.default_rng(30).random(HUGE, dtype=np.float32).astype(request.param)
    x[[0, HUGE // 3, HUGE - 1]] = (2.5, 3.5, 3.25)
    exact = {"sum": x.sum(dtype=np.float64), "max": float(x.max())}
    d = gpuarray.to_gpu(x)
    del x
    yield d, exact
    d.gpudata.free()


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: f"v{v}")
@pytest.mark.parametrize("op", [SUM, MAX], ids=lambda op: op.name)
def test_two_to_the_thirty(huge, op, version, record_property):
    d, exact = huge
    record_property("kernel", f"reduce_v{version}")
    record_property("size", [HUGE])
    record_property("block", f"{op.name} {d.dtype.name}")
    got = float(reduce(d, version=version, op=op).get()[0])
    want = exact[op.name]
    if op is MAX:
        assert got == want
    else:  # every element is >= 0, so sum |x| is the sum itself
        tol = 1e-5 if d.dtype == np.float32 else 1e-13
        assert abs(got - want) <= tol * want, (got, want)
