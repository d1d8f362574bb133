"""Every kernel version against its reference, on awkward sizes and several block
shapes. Tolerances are declared per family (bit-exact unless stated)."""

import zlib

import numpy as np
import pytest

from thousand.bench.checks import check_version
from thousand.kernels.family import all_families

pytestmark = pytest.mark.gpu

CASES = [
    pytest.param(
        f,
        v,
        size,
        block,
        id=f"{v.kernel}-{'x'.join(map(str, size))}-b{block}".replace(" ", ""),
    )
    for f in all_families()
    for v in f.versions
    for size in f.check_sizes
    for block in v.blocks
]


@pytest.mark.parametrize("family,version,size,block", CASES)
def test_matches_reference(family, version, size, block, record_property):
    record_property("kernel", version.kernel)
    record_property("size", list(size))
    record_property("block", str(block))
    seed = zlib.crc32(f"{version.kernel}{size}{block}".encode())  # same every run
    err, tol = check_version(family, version, size, block, seed=seed)
    assert err <= tol, f"{version.kernel} at {size}, block {block}: error {err:.3g}"


def test_numpy_in_numpy_out():
    from thousand.kernels.vector_add import vector_add

    x = np.arange(10, dtype=np.float32)
    out = vector_add(x, x)
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, 2 * x)


def test_gpuarray_stays_on_device():
    from pycuda import gpuarray

    from thousand.kernels.vector_add import vector_add

    x = gpuarray.to_gpu(np.arange(10, dtype=np.float32))
    out = vector_add(x, x)
    assert type(out).__name__ == "GPUArray"
    np.testing.assert_array_equal(out.get(), 2 * np.arange(10, dtype=np.float32))


def test_misaligned_view_is_rejected_by_vector_loads():
    from pycuda import gpuarray

    from thousand.kernels.vector_add import vector_add

    x = gpuarray.to_gpu(np.ones(17, dtype=np.float32))[1:]  # 4 bytes off alignment
    with pytest.raises(ValueError, match="aligned to 16 bytes"):
        vector_add(x, x, version=4)
    np.testing.assert_array_equal(vector_add(x, x, version=2).get(), 2.0)


def test_mixing_host_and_device_arrays_is_rejected():
    from pycuda import gpuarray

    from thousand.kernels.vector_add import vector_add

    x = np.ones(8, dtype=np.float32)
    with pytest.raises(ValueError, match="inputs mix GPUArray and ndarray"):
        vector_add(x, gpuarray.to_gpu(x))
