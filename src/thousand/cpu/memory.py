"""Device memory of the CPU backend: host pages handed to kernels by address.

A `DeviceArray` behaves like the part of PyCUDA's GPUArray the package uses: shape,
dtype, `get()`, `set()`, 1-D slicing, `reshape()`. Allocations start on 256-byte
boundaries, as cudaMalloc's do, so alignment checks and vector loads behave as on the
GPU; they sit between guard pages outside the Python heap (runtime.cpp), so a kernel
writing past an array faults rather than corrupting Python's memory.
"""

from __future__ import annotations

import ctypes
import weakref

import numpy as np


def _allocate(nbytes: int) -> tuple[np.ndarray, int]:
    from .engine import runtime

    rt = runtime()
    ptr = rt.thousand_device_alloc(nbytes)
    if not ptr:
        raise MemoryError(f"cannot allocate {nbytes:,} bytes of emulated device memory")
    raw = np.frombuffer((ctypes.c_uint8 * nbytes).from_address(ptr), np.uint8)
    owner = _Allocation()
    weakref.finalize(owner, rt.thousand_device_free, ptr, nbytes)
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
        if ary is None:
            return self._a.copy()
        np.copyto(ary, self._a)
        return ary

    def set(self, ary: np.ndarray) -> None:
        """Copy host data in; shape and dtype must match."""
        if ary.shape != self.shape or ary.dtype != self.dtype:
            raise ValueError(
                f"set: expected {self.dtype.name}{list(self.shape)}, got "
                f"{ary.dtype.name}{list(ary.shape)}"
            )
        np.copyto(self._a, ary)

    def fill(self, value) -> DeviceArray:
        self._a.fill(value)
        return self

    def __repr__(self) -> str:
        return f"DeviceArray({self.dtype.name}{list(self.shape)}, cpu emulation)"


def to_device(ary: np.ndarray) -> DeviceArray:
    d = DeviceArray(ary.shape, ary.dtype)
    d.set(np.ascontiguousarray(ary))
    return d


def empty(shape, dtype=np.float32) -> DeviceArray:
    return DeviceArray(shape, dtype)
