"""Helpers shared by both test layers."""

import os
import shutil

import pytest


def require_tool(name: str) -> str:
    """A tool the test needs: skip where it is missing, fail where CI=true."""
    path = shutil.which(name)
    if path:
        return path
    unavailable(f"{name} is not installed")


def require_module(name: str):
    """A package the test needs (nbformat for the notebook pages): skip where it is
    missing, fail where CI=true. Imported here, not at the top of the test module,
    so that a GPU machine without it still collects every other test."""
    import importlib

    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:
        unavailable(f"{name} is not installed (pip install -e '.[test]')")


def torch_on_gpu():
    """PyTorch with a CUDA GPU, for the GPU layer's checks of thousand.beyond: a
    clear error without a GPU or PyCUDA (driver()), a skip where PyTorch sees no GPU
    (a CPU build of PyTorch)."""
    from thousand.cuda import driver

    driver()
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA GPU (a CPU build of PyTorch?)")
    return torch


def unavailable(reason: str):
    """Something a test needs is missing: skip with the reason, but fail where
    CI=true, so CI cannot pass without having run the test."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}, and CI=true does not allow skipping it")
    pytest.skip(reason)


def execute_notebook(path, timeout: int):
    """Run a notebook top to bottom in a fresh kernel, which inherits this process's
    environment (THOUSAND_BACKEND included); any cell's error raises here."""
    import nbformat
    from nbclient import NotebookClient

    from thousand.bench.ledger import ROOT

    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=False,
        record_timing=False,  # no timestamps: the file changes only when outputs do
        resources={"metadata": {"path": str(ROOT)}},
    ).execute()
    return nb


def numpy_baseline(family):
    """The NumPy baseline the benchmarks time `family` against: its entry in
    thousand.bench.baselines.NUMPY, or else the `numpy_baseline` its own module
    defines (where the scaffold writes a new family's). None if neither exists."""
    import importlib

    from thousand.bench.baselines import NUMPY

    if family.name in NUMPY:
        return NUMPY[family.name]
    module = importlib.import_module(f"thousand.kernels.{family.name}")
    return getattr(module, "numpy_baseline", None)


def torch_baseline(family):
    """A family's PyTorch baseline defined in its own module (`torch_baseline`, for
    a family added after thousand.bench.baselines.torch_ops), or None."""
    import importlib

    module = importlib.import_module(f"thousand.kernels.{family.name}")
    return getattr(module, "torch_baseline", None)
