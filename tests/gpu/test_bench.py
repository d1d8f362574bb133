"""Benchmarks (pytest-benchmark). Kernel times are CUDA-event medians with L2 flushed
between repeats, kept in `extra_info`; pytest-benchmark's own wall-clock columns
include Python's launch overhead. No assertion here is about speed: the GPU run
(`python -m thousand.bench`) turns these numbers into ratios and targets.
"""

import time

import numpy as np
import pytest

from tests.helpers import numpy_baseline, torch_baseline
from thousand.bench.baselines import (
    BASELINE_FAMILY,
    PYCUDA_BASELINES,
    as_torch,
    pycuda_ops,
    torch_ops,
)
from thousand.bench.checks import bench_inputs, prepared_run
from thousand.cuda import driver, median, time_ms
from thousand.kernels.family import all_families

pytestmark = pytest.mark.gpu

REPEAT = 20
FAMILIES = all_families()
KERNELS = [pytest.param(f, v, id=v.kernel) for f in FAMILIES for v in f.versions]


def _record(benchmark, samples, **info):
    benchmark.extra_info.update(
        info,
        median_ms=median(samples),
        min_ms=min(samples),
        max_ms=max(samples),
        repeats=len(samples),
    )


@pytest.mark.parametrize("family,version", KERNELS)
def test_kernel(benchmark, family, version):
    run = prepared_run(version, bench_inputs(family))
    samples = time_ms(run, repeat=REPEAT)
    _record(
        benchmark,
        samples,
        kind="kernel",
        family=family.name,
        kernel=version.kernel,
        size=list(family.bench_size),
    )
    benchmark.pedantic(
        lambda: (run(), driver().Context.synchronize()), rounds=3, warmup_rounds=1
    )


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_numpy_baseline(benchmark, family):
    host = family.timed_inputs(np.random.default_rng(0), family.bench_size)
    run = numpy_baseline(family)(*host)
    rounds = 3 if family.name == "matmul" else 5
    benchmark.pedantic(run, rounds=rounds, warmup_rounds=1)
    benchmark.extra_info.update(
        kind="numpy", family=family.name, size=list(family.bench_size)
    )


BY_NAME = {f.name: f for f in FAMILIES}
TORCH_BASELINES = [f.name for f in FAMILIES] + sorted(BASELINE_FAMILY)


@pytest.mark.parametrize("name", TORCH_BASELINES)
def test_torch_baseline(benchmark, name):
    ops = torch_ops()
    if not ops:
        pytest.skip("PyTorch with CUDA is not installed: no library baseline")
    family = BY_NAME[BASELINE_FAMILY.get(name, name)]
    make = ops.get(name) or torch_baseline(family)
    if make is None:  # a teaching kernel (thread coordinates, say)
        pytest.skip(f"PyTorch has no single operation that does what {name} does")
    import torch

    driver()  # share the primary context: events see torch's kernels on stream 0
    host = family.timed_inputs(np.random.default_rng(0), family.bench_size)
    d_in = [as_torch(a) for a in host]
    run = make(*d_in)
    samples = time_ms(run, repeat=REPEAT)
    _record(
        benchmark,
        samples,
        kind="torch",
        family=name,
        size=list(family.bench_size),
        torch=torch.__version__,
    )
    benchmark.pedantic(lambda: (run(), torch.cuda.synchronize()), rounds=3)


@pytest.mark.parametrize("name", PYCUDA_BASELINES)
def test_pycuda_baseline(benchmark, name):
    """PyCUDA's own GPUArray method for the same operation (gpuarray.sum)."""
    family = BY_NAME[name]
    run = pycuda_ops()[name](*bench_inputs(family))
    samples = time_ms(run, repeat=REPEAT)
    _record(
        benchmark, samples, kind="pycuda", family=name, size=list(family.bench_size)
    )
    benchmark.pedantic(
        lambda: (run(), driver().Context.synchronize()), rounds=3, warmup_rounds=1
    )


SERIES_SIZES = [2**k for k in range(10, 29, 2)]


@pytest.mark.parametrize("n", SERIES_SIZES, ids=lambda n: f"2^{n.bit_length() - 1}")
def test_cpu_vs_gpu_series(benchmark, n):
    """B1's plot: NumPy on the CPU against the GPU, with and without the copies."""
    from pycuda import gpuarray

    from thousand.kernels.vector_add import vector_add

    drv = driver()
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(n, dtype=np.float32) for _ in range(2))
    out = np.empty_like(x)
    dx, dy, d_out = (gpuarray.empty(n, np.float32) for _ in range(3))
    dx.set(x)
    dy.set(y)

    def kernel_only():
        vector_add(dx, dy, out=d_out)

    def with_copies():  # pageable host memory, as a plain NumPy array is
        drv.memcpy_htod(dx.gpudata, x)
        drv.memcpy_htod(dy.gpudata, y)
        vector_add(dx, dy, out=d_out)
        drv.memcpy_dtoh(out, d_out.gpudata)

    cpu = []
    for _ in range(7):
        t0 = time.perf_counter()
        np.add(x, y, out=out)
        cpu.append((time.perf_counter() - t0) * 1e3)
    kernel = time_ms(kernel_only, repeat=REPEAT)
    copies = time_ms(with_copies, repeat=7, hold=False)  # the copies block
    np.testing.assert_array_equal(out, x + y)
    benchmark.extra_info.update(
        kind="series",
        series="b1-cpu-vs-gpu",
        n=n,
        numpy_ms=median(cpu[1:]),
        kernel_ms=median(kernel),
        with_copies_ms=median(copies),
    )
    benchmark.pedantic(with_copies, rounds=3)
