"""The CPU backend: the package's CUDA C kernels, compiled by g++, run on the CPU.

Each CUDA thread is a fiber; a block's fibers share one OS thread, blocks spread over
the cores. See docs (track B, "CUDA on a CPU") for how and what it cannot show.
"""

from . import build
from .engine import (
    GpuOnly,
    Trace,
    checked_mode,
    launch,
    module,
    set_constant,
    wants_checked,
    workers,
)
from .memory import DeviceArray, empty, to_device

__all__ = [
    "build",
    "DeviceArray",
    "GpuOnly",
    "Trace",
    "checked_mode",
    "empty",
    "launch",
    "module",
    "set_constant",
    "to_device",
    "wants_checked",
    "workers",
]
