"""Occupancy as the CUDA driver predicts it, for a kernel of the package.

`occupancy("copy", "copy_v1", block=256)` asks the driver's occupancy calculator,
cuOccupancyMaxActiveBlocksPerMultiprocessor, how many blocks of the kernel fit on
one SM at a time, and turns that into warps and a fraction of the SM's warp slots.

PyCUDA reads a kernel's attributes (registers, local memory) but wraps neither the
occupancy API nor the raw CUfunction handle it would need. So we ask PyCUDA's
compiler for the very cubin it loaded (same source, flags and architecture: its
disk cache hands back the same bytes), load that cubin a second time through the
driver library with ctypes, in PyCUDA's current context, and ask the driver about
that copy. As a guard, the copy must report the same register count as the
function PyCUDA launches. GPU only: the CPU backend has no occupancy to predict.
"""

from __future__ import annotations

import ctypes
import functools

from .backend import on_cpu
from .compiler import KERNEL_DIR, NVCC_FLAGS, kernel, nvcc_path, source_path
from .device import driver

# CUfunction_attribute values, from cuda.h
MAX_THREADS_PER_BLOCK = 0
LOCAL_SIZE_BYTES = 3
NUM_REGS = 4
MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
DEFAULT_SHARED_LIMIT = 48 * 1024  # beyond this a kernel must opt in (sm_70 and up)
# CUdevice_attribute values, from cuda.h: what bounds the blocks on one SM
SM_ATTRIBUTES = {
    "sm_count": 16,  # MULTIPROCESSOR_COUNT
    "warp_size": 10,
    "threads": 39,  # MAX_THREADS_PER_MULTIPROCESSOR
    "blocks": 106,  # MAX_BLOCKS_PER_MULTIPROCESSOR
    "registers": 82,  # MAX_REGISTERS_PER_MULTIPROCESSOR
    "registers_per_block": 12,  # MAX_REGISTERS_PER_BLOCK
    "shared": 81,  # MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, bytes
    "reserved_shared": 111,  # RESERVED_SHARED_MEMORY_PER_BLOCK: the driver's own
}


@functools.cache
def _libcuda() -> ctypes.CDLL:
    lib = ctypes.CDLL("libcuda.so.1")
    lib.cuGetErrorString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    lib.cuModuleLoadData.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p]
    lib.cuModuleGetFunction.argtypes = [
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.c_void_p,
        ctypes.c_char_p,
    ]
    lib.cuFuncGetAttribute.argtypes = [
        ctypes.POINTER(ctypes.c_int),
        ctypes.c_int,
        ctypes.c_void_p,
    ]
    lib.cuFuncSetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
    lib.cuCtxGetDevice.argtypes = [ctypes.POINTER(ctypes.c_int)]
    lib.cuDeviceGetAttribute.argtypes = [
        ctypes.POINTER(ctypes.c_int),
        ctypes.c_int,
        ctypes.c_int,
    ]
    lib.cuOccupancyMaxActiveBlocksPerMultiprocessor.argtypes = [
        ctypes.POINTER(ctypes.c_int),
        ctypes.c_void_p,
        ctypes.c_int,
        ctypes.c_size_t,
    ]
    return lib


def _check(result: int, what: str) -> None:
    if result != 0:
        text = ctypes.c_char_p()
        _libcuda().cuGetErrorString(result, ctypes.byref(text))
        why = text.value.decode() if text.value else f"CUresult {result}"
        raise RuntimeError(f"{what} failed: {why}")


class DriverFunction:
    """A kernel's CUfunction, loaded from the cubin PyCUDA compiled for it."""

    def __init__(self, family: str, name: str):
        _require_gpu()
        from pycuda.compiler import compile as pycuda_compile

        path = source_path(family)
        self.name = name
        self._image = pycuda_compile(  # the arguments compiler.module() passes
            path.read_text(),
            nvcc=nvcc_path(),
            options=NVCC_FLAGS,
            no_extern_c=True,
            include_dirs=[str(KERNEL_DIR), str(path.parent)],
        )
        lib = _libcuda()
        self._module = ctypes.c_void_p()
        _check(
            lib.cuModuleLoadData(ctypes.byref(self._module), self._image),
            f"cuModuleLoadData({path.name})",
        )
        self.handle = ctypes.c_void_p()
        _check(
            lib.cuModuleGetFunction(
                ctypes.byref(self.handle), self._module, name.encode()
            ),
            f"cuModuleGetFunction({name})",
        )
        drv = driver()
        launched = kernel(family, name).get_attribute(drv.function_attribute.NUM_REGS)
        if self.attribute(NUM_REGS) != launched:
            raise RuntimeError(
                f"{name}: the cubin loaded for the occupancy query uses "
                f"{self.attribute(NUM_REGS)} registers, the one PyCUDA launches "
                f"{launched}: they are not the same code"
            )
        self._shared_limit = DEFAULT_SHARED_LIMIT

    def attribute(self, which: int) -> int:
        value = ctypes.c_int()
        _check(
            _libcuda().cuFuncGetAttribute(ctypes.byref(value), which, self.handle),
            f"cuFuncGetAttribute({self.name}, {which})",
        )
        return value.value

    def blocks_per_sm(self, block: int, shared: int = 0) -> int:
        """Blocks of `block` threads, each with `shared` bytes of dynamic shared
        memory, that one SM holds at once (0: such a block does not fit at all)."""
        lib = _libcuda()
        if shared > self._shared_limit:  # opt in, as thousand.cuda.launch does
            _check(
                lib.cuFuncSetAttribute(
                    self.handle, MAX_DYNAMIC_SHARED_SIZE_BYTES, int(shared)
                ),
                f"cuFuncSetAttribute({self.name}, max dynamic shared = {shared})",
            )
            self._shared_limit = shared
        blocks = ctypes.c_int()
        _check(
            lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                ctypes.byref(blocks), self.handle, int(block), int(shared)
            ),
            f"cuOccupancyMaxActiveBlocksPerMultiprocessor({self.name}, {block})",
        )
        return blocks.value


def _require_gpu() -> None:
    if on_cpu():
        raise RuntimeError(
            "the occupancy calculator is the CUDA driver's: it runs only on a GPU"
        )
    driver()  # PyCUDA's primary context is current on this thread from here on


@functools.cache
def sm_limits() -> dict:
    """What one SM of the current device holds at most, read from the driver:
    the keys of SM_ATTRIBUTES (threads, blocks, registers, shared bytes, ...)."""
    _require_gpu()
    lib = _libcuda()
    device = ctypes.c_int()
    _check(lib.cuCtxGetDevice(ctypes.byref(device)), "cuCtxGetDevice")
    found = {}
    for key, attribute in SM_ATTRIBUTES.items():
        value = ctypes.c_int()
        _check(
            lib.cuDeviceGetAttribute(ctypes.byref(value), attribute, device),
            f"cuDeviceGetAttribute({key})",
        )
        found[key] = value.value
    return found


@functools.cache
def driver_function(family: str, name: str) -> DriverFunction:
    return DriverFunction(family, name)


# --8<-- [start:occupancy]
def occupancy(family: str, name: str, block: int, shared: int = 0) -> dict:
    """What the driver predicts for one launch configuration of `name`:
    blocks and warps resident per SM, and the fraction of the SM's warp slots."""
    fn = driver_function(family, name)
    blocks = fn.blocks_per_sm(block, shared)
    warps = blocks * -(-block // 32)  # a partial warp still takes a warp's slot
    slots = sm_limits()["threads"] // 32
    return {"blocks": blocks, "warps": warps, "fraction": warps / slots}


# --8<-- [end:occupancy]


def registers(family: str, name: str) -> int:
    """Registers per thread, as the compiler allocated them."""
    return driver_function(family, name).attribute(NUM_REGS)


def local_bytes(family: str, name: str) -> int:
    """Bytes of local memory per thread: registers spilled, arrays not in registers."""
    return driver_function(family, name).attribute(LOCAL_SIZE_BYTES)


def max_threads_per_block(family: str, name: str) -> int:
    """The largest block this kernel can launch with: registers can make it < 1024."""
    return driver_function(family, name).attribute(MAX_THREADS_PER_BLOCK)
