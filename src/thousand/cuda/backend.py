"""Which backend runs the kernels: the GPU through PyCUDA, or the CPU emulation.

THOUSAND_BACKEND=gpu|cpu|auto (default auto: the GPU when there is one, otherwise the
CPU backend, announced once on stderr). Everything a launcher or snippet needs goes
through the functions here, so the same code runs on either backend.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from .device import driver, gpu_status

CHOICES = ("gpu", "cpu", "auto")
_STATE: dict = {}


def backend() -> str:
    """'gpu' or 'cpu', decided once per process from THOUSAND_BACKEND."""
    if "name" not in _STATE:
        _STATE["name"] = _decide()
    return _STATE["name"]


def use_backend(name: str | None) -> str | None:
    """Switch backends (tests do); None decides afresh. Returns the previous one."""
    before = _STATE.get("name")
    if name is None:
        _STATE.pop("name", None)
    else:
        if name not in ("gpu", "cpu"):
            raise ValueError(f"backend must be 'gpu' or 'cpu', not {name!r}")
        if name == "gpu":
            driver()
        _STATE["name"] = name
    return before


def _decide() -> str:
    choice = os.environ.get("THOUSAND_BACKEND", "auto").strip().lower() or "auto"
    if choice not in CHOICES:
        raise ValueError(
            f"THOUSAND_BACKEND={choice!r}; choose one of {', '.join(CHOICES)}"
        )
    if choice == "gpu":
        driver()  # raises PyCudaMissing / NoGpu with the reason
        return "gpu"
    if choice == "cpu":
        return "cpu"
    ok, why = gpu_status()
    if ok:
        return "gpu"
    print(
        f"thousand: no GPU ({why}); running kernels on the CPU backend, which "
        "emulates CUDA: results match the GPU's, times are CPU times",
        file=sys.stderr,
    )
    return "cpu"


def on_cpu() -> bool:
    return backend() == "cpu"


def timing_label() -> str:
    """How to label a measured time, so CPU emulation is never read as a GPU figure."""
    return "CPU emulation" if on_cpu() else "GPU"


def is_device_array(x) -> bool:
    from thousand.cpu.memory import DeviceArray

    if isinstance(x, DeviceArray):
        return True
    return type(x).__name__ == "GPUArray" and hasattr(x, "gpudata")


def device_address(x) -> int:
    return x.ptr if hasattr(x, "allocation") else int(x.gpudata)


def to_device(a: np.ndarray):
    """Copy a host array to the device: a GPUArray, or the CPU backend's DeviceArray."""
    if on_cpu():
        from thousand.cpu import to_device as cpu_to_device

        return cpu_to_device(a)
    driver()
    from pycuda import gpuarray

    return gpuarray.to_gpu(np.ascontiguousarray(a))


def empty(shape, dtype=np.float32):
    if on_cpu():
        from thousand.cpu import empty as cpu_empty

        return cpu_empty(shape, dtype)
    driver()
    from pycuda import gpuarray

    return gpuarray.empty(shape, dtype)


def fill(d, value) -> None:
    """Set every element of device array `d` to `value`. On the GPU a 4-byte pattern
    is one cuMemsetD32 (GPUArray.fill would launch a generated kernel, with more
    Python in front of it: it showed in the timings of short kernels)."""
    words = np.array([value], dtype=d.dtype).view(np.uint32)
    if on_cpu() or not np.all(words == words[0]):
        d.fill(value)
        return
    driver().memset_d32_async(int(d.gpudata), int(words[0]), d.nbytes // 4)


class Uploader:
    """Host arrays into device arrays without making the host wait for the GPU.

    d.set(a) copies from pageable memory, which waits for every kernel queued
    before it: a training step that uploads its batch, or its learning rate for
    the optimizer, lets the GPU's queue run dry and then refills it at the
    host's launch speed. Here each destination has a page-locked staging buffer:
    the copy is queued behind the kernels and the host goes on. Before a staging
    buffer is written again, the host waits for its previous copy (an event), so
    it runs at most one copy ahead per destination. On the CPU backend: d.set(a).
    """

    def __init__(self):
        self._staged: dict = {}  # device address -> (page-locked buffer, event)

    def __call__(self, d, a: np.ndarray):
        a = np.ascontiguousarray(a)
        if a.shape != tuple(d.shape) or a.dtype != d.dtype:
            raise ValueError(
                f"upload: {a.dtype.name}{list(a.shape)} does not fit the device "
                f"array {d.dtype.name}{list(d.shape)}"
            )
        if on_cpu():
            d.set(a)
            return d
        drv = driver()
        key = int(d.gpudata)
        staged = self._staged.get(key)
        if staged is None or staged[0].shape != a.shape or staged[0].dtype != a.dtype:
            staged = self._staged[key] = (
                drv.pagelocked_empty(a.shape, a.dtype),
                drv.Event(),
            )
        buf, copied = staged
        copied.synchronize()  # its last copy has left the buffer (at once if none)
        buf[...] = a
        drv.memcpy_htod_async(d.gpudata, buf)
        copied.record()
        return d


def torch_view(d):
    """Device array `d`'s memory as a torch tensor, no copy: a CUDA tensor on the
    GPU (through the CUDA array interface; our context is the primary one torch
    uses too), a CPU tensor over the CPU backend's memory. For handing a buffer
    to torch.distributed, which then works on it in place."""
    import torch

    if not is_device_array(d):
        raise TypeError(f"torch_view: expected a device array, got {type(d).__name__}")
    if on_cpu():
        return torch.from_numpy(d.memory())
    return torch.as_tensor(d, device="cuda")


def empty_like(d):
    return empty(d.shape, d.dtype)


def synchronize() -> None:
    """Wait until the device has finished all work (CPU launches are synchronous)."""
    if not on_cpu():
        driver().Context.synchronize()
