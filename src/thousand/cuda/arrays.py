"""Input checks and host/device staging shared by every launcher.

Checks run before anything touches the device, so bad input is rejected the same way
on every backend. Launchers accept NumPy arrays (copied in and out for you) or device
arrays (PyCUDA GPUArrays, or the CPU backend's DeviceArrays, left on the device);
mixing the two is an error.
"""

from __future__ import annotations

import numpy as np

from .backend import device_address, empty, is_device_array, to_device

INT32_MAX = 2**31 - 1


def check_array(op: str, name: str, x, *, ndim: int, dtype=np.float32) -> None:
    """Raise ValueError unless `x` is a C-contiguous `ndim`-D array of `dtype`."""
    if not (isinstance(x, np.ndarray) or is_device_array(x)):
        raise ValueError(
            f"{op}: `{name}` must be a numpy.ndarray or a device array, "
            f"got {type(x).__name__}"
        )
    if x.dtype != np.dtype(dtype):
        raise ValueError(
            f"{op}: `{name}` must be {np.dtype(dtype).name}, got {x.dtype.name} "
            f"(convert with .astype(np.{np.dtype(dtype).name}))"
        )
    if x.ndim != ndim:
        raise ValueError(f"{op}: `{name}` must be {ndim}-D, got shape {tuple(x.shape)}")
    if not x.flags.c_contiguous:
        raise ValueError(
            f"{op}: `{name}` must be C-contiguous (row-major, no strides); "
            "pass np.ascontiguousarray(x)"
        )
    if x.size > INT32_MAX:
        raise ValueError(
            f"{op}: `{name}` has {x.size} elements; kernels index with int32"
        )


def check_shape(op: str, name: str, x, shape: tuple) -> None:
    if tuple(x.shape) != tuple(shape):
        raise ValueError(
            f"{op}: `{name}` must have shape {tuple(shape)}, got {x.shape}"
        )


def check_block(op: str, block: tuple[int, ...], limit: int = 1024) -> None:
    """CUDA allows at most 1024 threads per block (every GPU since compute 2.0)."""
    if any(int(b) <= 0 for b in block):
        raise ValueError(f"{op}: block dimensions must be positive, got {block}")
    threads = int(np.prod(block))
    if threads > limit:
        raise ValueError(
            f"{op}: a block of {block} has {threads} threads; "
            f"CUDA allows at most {limit}"
        )


def check_aligned(op: str, name: str, x, nbytes: int) -> None:
    """Vector loads (float4) need addresses that are multiples of their width."""
    # An empty GPUArray has no address at all, and nothing to load.
    if x.size and is_device_array(x) and device_address(x) % nbytes:
        raise ValueError(
            f"{op}: `{name}` starts at a device address not aligned to {nbytes} bytes "
            "(a sliced device array?); this version uses vector loads, copy it first"
        )


class Staging:
    """Move inputs to the device if they are on the host, and results back.

    stage = Staging(op, x, y)          # after the checks; makes the context
    dx, dy = stage.inputs()            # device arrays either way
    d_out = stage.output(out, shape)   # the caller's `out`, or a new array
    ...launch...
    return stage.result(d_out, out)    # NumPy in, NumPy out
    """

    def __init__(self, op: str, *arrays):
        kinds = {type(a).__name__ if is_device_array(a) else "ndarray" for a in arrays}
        if len(kinds) > 1:
            raise ValueError(
                f"{op}: inputs mix {' and '.join(sorted(kinds))}; pass all of one kind"
            )
        self.on_host = kinds.pop() == "ndarray"
        self.arrays = arrays
        from .backend import backend

        backend()  # decides (and says) where kernels run; a clear error if nowhere

    def inputs(self):
        return [to_device(a) if self.on_host else a for a in self.arrays]

    def output(self, out, shape, dtype=np.float32):
        """The device array to write into: the caller's `out`, or a new one."""
        if out is None:
            return empty(shape, dtype)
        if self.on_host != (not is_device_array(out)):
            raise ValueError("`out` must be the same kind of array as the inputs")
        return to_device(out) if self.on_host else out

    def result(self, d_out, out=None):
        if not self.on_host:
            return d_out
        if out is None:
            return d_out.get()
        d_out.get(ary=out)
        return out
