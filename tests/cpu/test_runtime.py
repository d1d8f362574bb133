"""The runtime's own errors: missing PyCUDA, no GPU, missing nvcc."""

import importlib.util

import numpy as np
import pytest

from thousand.cuda import NvccMissing, PyCudaMissing, gpu_status, nvcc_path
from thousand.kernels.vector_add import vector_add

HAS_PYCUDA = importlib.util.find_spec("pycuda") is not None


@pytest.mark.skipif(HAS_PYCUDA, reason="PyCUDA is installed here")
def test_launch_without_pycuda_says_how_to_install_it():
    x = np.ones(4, np.float32)
    with pytest.raises(PyCudaMissing, match=r"pip install 'thousand-points\[gpu\]'"):
        vector_add(x, x)
    ok, why = gpu_status()
    assert not ok and "PyCUDA is not installed" in why


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
