"""Device memory of the CPU backend: host pages handed to kernels by address.

A `DeviceArray` behaves like the part of PyCUDA's GPUArray the package uses: shape,
dtype, `get()`, `set()`, 1-D slicing, `reshape()`. Allocations start on 256-byte
boundaries, as cudaMalloc's do, so alignment checks and vector loads behave as on the
GPU. They sit on pages of their own outside the Python heap, with a guard page on
either side (runtime.cpp): in the fast build a kernel running off the end of an array
faults, but a wild pointer that lands in other mapped memory, or a small overrun
before the start, is not caught; the checked build catches those.

Each allocation costs 2 to 3 of the process's memory mappings (its pages and a guard on
either side; neighbours' guards merge), which Linux caps (vm.max_map_count, 65,530 by
default): some 30,000 live arrays reach it, and MemoryError then says so.
"""

from __future__ import annotations

import ctypes
import errno
import os
import weakref
from pathlib import Path

import numpy as np

# The array's pages and a guard page on either side: 3 mappings, 2 where the guard
# merges with a neighbour's, as it mostly does.
MAPS_PER_ARRAY = 2
# The mapping limit allocations are checked against: None reads vm.max_map_count
# (tests set a small number to reach it quickly).
MAP_LIMIT: int | None = None
_LIVE = [0]  # device allocations not yet freed


def max_map_count() -> int:
    """Linux's limit on one process's memory mappings (65,530 by default)."""
    try:
        return int(Path("/proc/sys/vm/max_map_count").read_text())
    except (OSError, ValueError):
        return 65530


def live_arrays() -> int:
    """How many device allocations are live (views share their array's)."""
    return _LIVE[0]


def mapping_advice(limit: int | None = None) -> str:
    """What holds the process's mappings, for errors where they ran out."""
    limit = limit or max_map_count()
    return (
        f"; {live_arrays():,} device arrays are live, each costs 2 to 3 memory "
        f"mappings, and a process may have {limit:,} (vm.max_map_count): free "
        "arrays you no longer need (del them, or let them go out of scope) or raise "
        "the limit (sysctl -w vm.max_map_count=262144)"
    )


def _freed(free, ptr: int, nbytes: int) -> None:
    free(ptr, nbytes)
    _LIVE[0] -= 1


def _allocate(nbytes: int) -> tuple[np.ndarray, int]:
    from .engine import runtime

    rt = runtime()
    limit = MAP_LIMIT or max_map_count()
    failed = f"cannot allocate {nbytes:,} bytes of emulated device memory"
    if (live_arrays() + 1) * MAPS_PER_ARRAY > limit:
        raise MemoryError(failed + mapping_advice(limit))
    ptr = rt.thousand_device_alloc(nbytes)
    if not ptr:
        code = ctypes.get_errno()
        # ENOMEM for a small request: the mappings ran out, not the memory
        if code == errno.ENOMEM and nbytes < 2**30:
            raise MemoryError(failed + mapping_advice(limit))
        raise MemoryError(f"{failed}: {os.strerror(code)}")
    _LIVE[0] += 1
    raw = np.frombuffer((ctypes.c_uint8 * nbytes).from_address(ptr), np.uint8)
    owner = _Allocation()
    weakref.finalize(owner, _freed, rt.thousand_device_free, ptr, nbytes)
    owner.raw = raw
    return owner, ptr


class _Allocation:
    """Lives as long as any array viewing the memory; frees it when collected."""


class DeviceArray:
    def __init__(self, shape, dtype=np.float32, *, _view=None, _allocation=None):
        if _view is None:
            dtype = np.dtype(dtype)
            shape = tuple(int(s) for s in np.atleast_1d(shape)) if shape != () else ()
            nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            owner, ptr = _allocate(nbytes)
            _view = owner.raw.view(dtype).reshape(shape)
            # what a checked launch allows: exactly the bytes asked for, no padding
            _allocation = (ptr, nbytes, owner)
        self._a = _view
        self.allocation = _allocation[:2]
        self._owner = _allocation[2]

    # ---- the GPUArray-like surface ----
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: self._a.flags)

    @property
    def ptr(self) -> int:
        """The address a kernel receives for this array."""
        return self._a.ctypes.data

    def __len__(self) -> int:
        return len(self._a)

    def __getitem__(self, key) -> DeviceArray:
        view = self._a[key]
        if not isinstance(view, np.ndarray) or view.ndim == 0:
            raise IndexError("index a device array with slices; use .get() for values")
        return DeviceArray(
            view.shape, _view=view, _allocation=(*self.allocation, self._owner)
        )

    def reshape(self, *shape) -> DeviceArray:
        """A view with another shape, the same memory (as GPUArray.reshape)."""
        if len(shape) == 1 and isinstance(shape[0], tuple | list):
            shape = tuple(shape[0])
        view = self._a.reshape(shape)
        if not np.shares_memory(view, self._a):
            raise ValueError("reshape: this array cannot be viewed in that shape")
        return DeviceArray(
            view.shape, _view=view, _allocation=(*self.allocation, self._owner)
        )

    def get(self, ary: np.ndarray | None = None) -> np.ndarray:
        """Copy to the host: a new array, or into `ary`."""
        _not_while_recording("a copy to the host")
        if ary is None:
            return self._a.copy()
        np.copyto(ary, self._a)
        return ary

    def set(self, ary: np.ndarray) -> None:
        """Copy host data in; shape and dtype must match."""
        _not_while_recording("a copy from the host")
        if ary.shape != self.shape or ary.dtype != self.dtype:
            raise ValueError(
                f"set: expected {self.dtype.name}{list(self.shape)}, got "
                f"{ary.dtype.name}{list(ary.shape)}"
            )
        np.copyto(self._a, ary)

    def fill(self, value) -> DeviceArray:
        self._a.fill(value)
        return self

    def memory(self) -> np.ndarray:
        """The emulated device memory itself, as a NumPy array (no copy): what the
        backend hands to libraries that work in place (thousand.cuda.torch_view)."""
        return self._a

    def __repr__(self) -> str:
        return f"DeviceArray({self.dtype.name}{list(self.shape)}, cpu emulation)"


def _not_while_recording(what: str) -> None:
    """A CUDA graph holds kernels only: a copy inside `with Graph()` makes CUDA end
    the capture with an error on a GPU. Refuse it here too, rather than let the
    copy run at recording time and the replay go without it."""
    from thousand.cuda.graphs import Graph

    if Graph.recording is not None:
        raise RuntimeError(
            f"{what} cannot be recorded in a CUDA graph: copy before or after "
            "the `with Graph()` block (on a GPU the capture would fail)"
        )


def to_device(ary: np.ndarray) -> DeviceArray:
    d = DeviceArray(ary.shape, ary.dtype)
    d.set(np.ascontiguousarray(ary))
    return d


def empty(shape, dtype=np.float32) -> DeviceArray:
    return DeviceArray(shape, dtype)
