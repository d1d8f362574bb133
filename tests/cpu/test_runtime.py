"""The runtime's own errors and the backend switch: missing PyCUDA, no GPU, missing
nvcc or g++, THOUSAND_BACKEND."""

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

from thousand.cpu import build
from thousand.cuda import (
    CompilerMissing,
    NvccMissing,
    PyCudaMissing,
    gpu_status,
    nvcc_path,
    use_backend,
)
from thousand.kernels.vector_add import vector_add

HAS_PYCUDA = importlib.util.find_spec("pycuda") is not None


@pytest.fixture
def fresh_backend(monkeypatch):
    """Let the next launch decide the backend again from THOUSAND_BACKEND."""
    before = use_backend(None)
    yield monkeypatch
    use_backend(None)
    if before:
        use_backend(before)


@pytest.mark.skipif(HAS_PYCUDA, reason="PyCUDA is installed here")
def test_gpu_backend_without_pycuda_says_how_to_install_it(fresh_backend):
    fresh_backend.setenv("THOUSAND_BACKEND", "gpu")
    x = np.ones(4, np.float32)
    with pytest.raises(PyCudaMissing, match=r"pip install 'thousand-points\[gpu\]'"):
        vector_add(x, x)
    ok, why = gpu_status()
    assert not ok and "PyCUDA is not installed" in why


def test_unknown_backend_is_an_error(fresh_backend):
    fresh_backend.setenv("THOUSAND_BACKEND", "tpu")
    with pytest.raises(ValueError, match="THOUSAND_BACKEND='tpu'; choose one of gpu"):
        vector_add(np.ones(4, np.float32), np.ones(4, np.float32))


@pytest.mark.skipif(HAS_PYCUDA, reason="PyCUDA is installed here")
def test_auto_without_a_gpu_runs_on_the_cpu_and_says_so_once():
    code = (
        "import numpy as np; from thousand.kernels.vector_add import vector_add;"
        "x = np.arange(5, dtype=np.float32);"
        "print(vector_add(x, x).tolist(), vector_add(x, x).tolist())"
    )
    env = {k: v for k, v in os.environ.items() if k != "THOUSAND_BACKEND"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[0.0,", "2.0,", "4.0,", "6.0,", "8.0]"] * 2
    assert done.stderr.count("running kernels on the CPU backend") == 1


def test_missing_cxx_is_named(monkeypatch):
    monkeypatch.setenv("CXX", "/nonexistent/g++")
    with pytest.raises(CompilerMissing, match="install g\\+\\+"):
        build.compiler()


def test_missing_nvcc_is_named(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("CUDA_HOME", raising=False)
    with pytest.raises(NvccMissing, match="nvcc .* is not on PATH"):
        nvcc_path()


def test_importing_the_package_does_not_touch_the_gpu():
    import subprocess
    import sys

    code = (
        "import sys, thousand, thousand.kernels, thousand.cuda;"
        "thousand.kernels.all_families(); print('pycuda' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def test_bad_worker_count_is_named(monkeypatch):
    from thousand import cpu

    monkeypatch.setenv("THOUSAND_CPU_WORKERS", "many")
    with pytest.raises(ValueError, match="THOUSAND_CPU_WORKERS='many'"):
        cpu.workers()
