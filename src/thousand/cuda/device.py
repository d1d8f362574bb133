"""The device and its context, created lazily on first use.

We use the device's *primary* context (`pycuda.autoprimaryctx`), the one the CUDA
runtime uses too, so our kernels and PyTorch or CuPy share one context in one process.
"""

from __future__ import annotations

import functools
import importlib.util
import os

from .errors import NoGpu, PyCudaMissing

INSTALL_HINT = "pip install 'thousand-points[gpu]'"


@functools.cache
def driver():
    """Return `pycuda.driver` with the primary context of device 0 current."""
    if importlib.util.find_spec("pycuda") is None:
        raise PyCudaMissing(f"PyCUDA is not installed; to run kernels: {INSTALL_HINT}")
    try:
        import pycuda.driver as drv
    except ImportError as e:  # the extension module needs libcuda from the driver
        raise NoGpu(
            f"PyCUDA is installed but cannot load the NVIDIA driver library ({e}); "
            "this machine has no usable NVIDIA driver"
        ) from e
    try:
        drv.init()
        count = drv.Device.count()
    except drv.Error as e:
        raise NoGpu(f"the CUDA driver found no usable GPU ({e})") from e
    if count == 0:
        raise NoGpu("the CUDA driver reports 0 GPUs")
    import pycuda.autoprimaryctx  # noqa: F401  (retains and pushes the primary context)

    return drv


def use_device(index: int):
    """Make the package's context on GPU `index` (one process per GPU, as B19's
    ranks are) and return `pycuda.driver`. Call it before any kernel runs: a
    context made already on another GPU is an error, not silently kept."""
    if not driver.cache_info().currsize:
        os.environ["CUDA_DEVICE"] = str(index)  # read by pycuda.autoprimaryctx
    drv = driver()
    if not 0 <= index < drv.Device.count():
        raise ValueError(
            f"use_device: no GPU {index}; this machine has {drv.Device.count()}"
        )
    if drv.Context.get_device() != drv.Device(index):
        raise RuntimeError(
            f"use_device: the package's context is on another GPU already; call "
            f"use_device({index}) before the first kernel runs"
        )
    return drv


def gpu_status() -> tuple[bool, str]:
    """(True, device name) when kernels can run, else (False, why not). Never raises."""
    if os.environ.get("THOUSAND_NO_GPU"):
        return False, "THOUSAND_NO_GPU is set"
    try:
        drv = driver()
    except (PyCudaMissing, NoGpu) as e:
        return False, str(e)
    return True, drv.Context.get_device().name()


def current_device():
    return driver().Context.get_device()


def device_info() -> dict:
    """Facts about the current device, read from the device (nothing typed in).

    On the CPU backend: CUDA's limits and the CPU's own sizes, named as emulation.
    """
    from .backend import on_cpu

    if on_cpu():
        from thousand.cpu.device import device_info as cpu_info

        return cpu_info()
    return _gpu_info()


@functools.cache
def _gpu_info() -> dict:
    drv = driver()
    dev = current_device()
    a = {str(k): v for k, v in dev.get_attributes().items()}
    major, minor = dev.compute_capability()
    mem_clock_khz = a.get("MEMORY_CLOCK_RATE")
    bus_bits = a.get("GLOBAL_MEMORY_BUS_WIDTH")
    # DDR memory moves data on both clock edges: 2 * clock * bus width.
    peak_gbps = (
        2 * mem_clock_khz * 1e3 * bus_bits / 8 / 1e9
        if mem_clock_khz and bus_bits
        else None
    )
    import pycuda

    return {
        "name": dev.name(),
        "compute_capability": f"{major}.{minor}",
        "sm_count": a["MULTIPROCESSOR_COUNT"],
        "warp_size": a["WARP_SIZE"],
        "max_threads_per_block": a["MAX_THREADS_PER_BLOCK"],
        "max_block_dim": [
            a["MAX_BLOCK_DIM_X"],
            a["MAX_BLOCK_DIM_Y"],
            a["MAX_BLOCK_DIM_Z"],
        ],
        "max_grid_dim": [a["MAX_GRID_DIM_X"], a["MAX_GRID_DIM_Y"], a["MAX_GRID_DIM_Z"]],
        "max_threads_per_sm": a["MAX_THREADS_PER_MULTIPROCESSOR"],
        "shared_memory_per_block": a["MAX_SHARED_MEMORY_PER_BLOCK"],
        "registers_per_block": a["MAX_REGISTERS_PER_BLOCK"],
        "l2_cache_bytes": a["L2_CACHE_SIZE"],
        "total_memory_bytes": dev.total_memory(),
        "sm_clock_mhz": a.get("CLOCK_RATE", 0) / 1e3 or None,
        "memory_clock_mhz": mem_clock_khz / 1e3 if mem_clock_khz else None,
        "memory_bus_bits": bus_bits,
        "peak_bandwidth_gbps": peak_gbps,
        "driver_release": _driver_release(),
        "cuda_driver_api": _version_text(drv.get_driver_version()),
        "pycuda_cuda_version": ".".join(map(str, drv.get_version())),
        "pycuda": pycuda.VERSION_TEXT,
        "backend": "gpu",
    }


def _driver_release() -> str | None:
    """The driver's release number (e.g. 580.95), which only nvidia-smi reports."""
    import subprocess

    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return out.strip().splitlines()[0] if out.strip() else None


def _version_text(v: int) -> str:
    """CUDA encodes versions as 1000*major + 10*minor."""
    return f"{v // 1000}.{v % 1000 // 10}"


@functools.cache
def shared_memory_optin() -> int:
    """Bytes of shared memory a block may have once the kernel opts in (the limit
    beyond the default 48 KiB): 227 KiB on H100, 163 KiB on A100, 99 KiB on sm_89."""
    drv = driver()
    attr = drv.device_attribute.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    return current_device().get_attribute(attr)
