"""`__constant__` memory: copy values into a variable a family's .cu file declares.

    __constant__ float stencil_taps[9];            // in kernels/stencil.cu
    set_constant("stencil", "stencil_taps", taps)  # 9 float32 values, host or device

On the GPU the variable lives in the family's compiled module (cuModuleGetGlobal
finds it by name); on the CPU backend it is a global of the family's library. Either
way the number of bytes must match the declaration exactly: a constant array that is
only partly set would leave the kernel reading whatever was there before.
"""

from __future__ import annotations

import numpy as np

from .backend import device_address, is_device_array, on_cpu
from .compiler import module
from .device import driver


def no_such_constant(family, symbol: str) -> str:
    return f"{family}.cu has no __constant__ variable {symbol!r}"


def size_mismatch(family, symbol: str, size: int, values) -> str:
    return (
        f"{family}.cu: __constant__ {symbol} holds {size} bytes; got "
        f"{values.nbytes} bytes ({values.size} x {values.dtype.name})"
    )


# --8<-- [start:set-constant]
def set_constant(family: str, symbol: str, values, dtype=None) -> None:
    """Copy `values` (a NumPy array or a device array) into `symbol`.

    `dtype`, when given, is the element type the variable is declared with. On the
    GPU a device array is copied device to device on the default stream, so kernels
    launched after this call see the new values and no host synchronisation is
    needed.
    """
    if not (isinstance(values, np.ndarray) or is_device_array(values)):
        raise ValueError(
            f"set_constant: values must be a numpy.ndarray or a device array, "
            f"got {type(values).__name__}"
        )
    if dtype is not None and values.dtype != np.dtype(dtype):
        raise ValueError(
            f"set_constant: {symbol} is {np.dtype(dtype).name}, got "
            f"{values.dtype.name} (convert with .astype(np.{np.dtype(dtype).name}))"
        )
    if not values.flags.c_contiguous:
        raise ValueError("set_constant: values must be C-contiguous")
    if on_cpu():
        from thousand import cpu

        host = values.get() if is_device_array(values) else values
        cpu.set_constant(family, symbol, host)
        return
    drv = driver()
    try:
        address, size = module(family).get_global(symbol)
    except drv.Error as e:  # CUDA_ERROR_NOT_FOUND
        raise ValueError(f"{no_such_constant(family, symbol)} ({e})") from e
    if size != values.nbytes:
        raise ValueError(size_mismatch(family, symbol, size, values))
    if is_device_array(values):
        drv.memcpy_dtod_async(address, device_address(values), size)
    else:
        drv.memcpy_htod(address, values)


# --8<-- [end:set-constant]
