"""Load the CPU builds and launch kernels from them, as PyCUDA does on the GPU.

`launch(family, name, grid, block, *args, shared=0)` takes the same arguments as the
GPU launch: device arrays for pointers, NumPy scalars (np.int32, np.float32, ...)
for values. Unlike a GPU launch it checks each argument against the kernel's C++
parameter types first, because the compiler told us what they are.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from thousand.cuda.errors import KernelFault

from . import build
from .memory import DeviceArray

# Limits a launch must respect on every CUDA GPU since compute capability 3.0.
MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK_DIM = (1024, 1024, 64)
MAX_GRID_DIM = (2**31 - 1, 65535, 65535)


class _Buffer(ctypes.Structure):
    _fields_ = [
        ("base", ctypes.c_uint64),
        ("size", ctypes.c_uint64),
        ("name", ctypes.c_char_p),
    ]


# One recorded access; the same layout as `struct Access` in runtime.cpp.
ACCESS_DTYPE = np.dtype(
    [
        ("block", np.uint32),
        ("thread", np.uint32),
        ("site", np.uint64),
        ("offset", np.int64),
        ("buffer", np.int32),
        ("size", np.uint16),
        ("write", np.uint8),
        ("shared", np.uint8),
    ],
    align=True,
)


class _Spec(ctypes.Structure):
    _fields_ = [
        ("grid", ctypes.c_uint32 * 3),
        ("block", ctypes.c_uint32 * 3),
        ("workers", ctypes.c_int32),
        ("checked", ctypes.c_int32),
        ("n_buffers", ctypes.c_int32),
        ("buffers", ctypes.POINTER(_Buffer)),
        ("tls_touch", ctypes.c_void_p),
        ("module_base", ctypes.c_uint64),
        ("trace", ctypes.c_void_p),
        ("trace_capacity", ctypes.c_uint64),
        ("trace_count", ctypes.c_uint64),
        ("trace_blocks", ctypes.c_uint32),
        ("error", ctypes.c_char_p),
        ("error_size", ctypes.c_uint64),
        ("handle", ctypes.c_void_p),
    ]


# Each C++ parameter type (as the build's signature string codes it) and the NumPy
# scalar type a caller must pass for it.
SCALARS = {
    "i": (np.int32, ctypes.c_int32),
    "I": (np.uint32, ctypes.c_uint32),
    "q": (np.int64, ctypes.c_int64),
    "Q": (np.uint64, ctypes.c_uint64),
    "f": (np.float32, ctypes.c_float),
    "d": (np.float64, ctypes.c_double),
}


@functools.cache
def runtime() -> ctypes.CDLL:
    # RTLD_GLOBAL: the kernel libraries find the runtime's symbols through it.
    lib = build.load(build.runtime_library(), mode=ctypes.RTLD_GLOBAL, use_errno=True)
    lib.thousand_module_base.restype = ctypes.c_uint64
    lib.thousand_module_base.argtypes = [ctypes.c_void_p]
    lib.thousand_device_alloc.restype = ctypes.c_void_p
    lib.thousand_device_alloc.argtypes = [ctypes.c_uint64]
    lib.thousand_device_free.restype = None
    lib.thousand_device_free.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
    lib.thousand_wait_grid.restype = ctypes.c_int
    lib.thousand_wait_grid.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.thousand_cancel_grid.restype = None
    lib.thousand_cancel_grid.argtypes = [ctypes.c_void_p]
    lib.thousand_finish_grid.restype = ctypes.c_int
    lib.thousand_finish_grid.argtypes = [ctypes.c_void_p]
    return lib


@dataclass
class Kernel:
    name: str
    launcher: ctypes._CFuncPtr
    signature: str
    params: list[str]


class Module:
    """One family's library: its kernels, with their parameter types and names."""

    def __init__(self, family: str | Path, checked: bool, gpu_only: dict[str, str]):
        rt = runtime()
        self.family = family
        self.checked = checked
        self.gpu_only = gpu_only
        self.lib = build.load(
            build.family_library(family, checked, set(gpu_only)),
            mode=ctypes.RTLD_LOCAL,
        )
        touch = self.lib.thousand_tls_touch
        self.tls_touch = ctypes.cast(touch, ctypes.c_void_p).value
        self.base = rt.thousand_module_base(self.tls_touch)
        source = build.source_path(family).read_text()
        self.params = build.kernels_in(source)
        self._kernels: dict[str, Kernel] = {}
        for (fam, symbol), data in _CONSTANTS.items():  # set before this build loaded
            if fam == family:
                self.write_constant(symbol, data)
        _LOADED.append(self)

    def write_constant(self, symbol: str, data: np.ndarray) -> None:
        """Copy `data` (its bytes) into the library's `__constant__` variable."""
        from thousand.cuda.constant import no_such_constant, size_mismatch

        try:
            where = getattr(self.lib, f"thousand_constant_{symbol}")
        except AttributeError:
            raise ValueError(no_such_constant(self.family, symbol)) from None
        where.restype = ctypes.c_void_p
        where.argtypes = [ctypes.POINTER(ctypes.c_uint64)]
        size = ctypes.c_uint64()
        address = where(ctypes.byref(size))
        if size.value != data.nbytes:
            raise ValueError(size_mismatch(self.family, symbol, size.value, data))
        ctypes.memmove(address, data.ctypes.data, data.nbytes)

    def kernel(self, name: str) -> Kernel:
        if name in self._kernels:
            return self._kernels[name]
        if name in self.gpu_only:
            raise GpuOnly(f"{name} runs only on a GPU: {self.gpu_only[name]}")
        if name not in self.params:
            raise AttributeError(
                f'{self.family}.cu has no extern "C" __global__ function {name!r}; '
                f"it has {sorted(self.params)}"
            )
        launcher = getattr(self.lib, f"thousand_launch_{name}")
        launcher.restype = ctypes.c_int
        launcher.argtypes = [ctypes.POINTER(_Spec), ctypes.c_void_p]
        sig_fn = getattr(self.lib, f"thousand_signature_{name}")
        sig_fn.restype = ctypes.c_char_p
        k = Kernel(name, launcher, sig_fn().decode(), self.params[name])
        self._kernels[name] = k
        return k


class GpuOnly(RuntimeError):
    """The kernel needs hardware the CPU backend cannot emulate (tensor cores, PTX)."""


def _switch(variable: str) -> bool | None:
    """An on/off environment variable: None where unset or empty."""
    value = os.environ.get(variable, "").strip()
    if not value:
        return None
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    if value.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(
        f"{variable}={value!r}: give 1, true, yes or on, or 0, false, no or off"
    )


# checked: True or False inside checked_mode(); None leaves it to
# THOUSAND_CPU_CHECKED, read at each launch, and where that is unset too, runs the
# package's own kernels fast and everyone else's checked (wants_checked).
_SETTINGS: dict[str, bool | None] = {"checked": None}
# __constant__ memory: a family's fast and checked builds are two libraries, each
# with its own copy of the variable; what was set goes into both, also into one that
# loads later.
_CONSTANTS: dict[tuple, np.ndarray] = {}
_LOADED: list = []


def set_constant(family: str, symbol: str, data: np.ndarray) -> None:
    """What thousand.cuda.set_constant does on the CPU backend."""
    data = np.ascontiguousarray(data)
    builds = [m for m in _LOADED if m.family == family]
    for m in builds or [module(family, wants_checked(family))]:
        m.write_constant(symbol, data)  # checks the name and the size first
    _CONSTANTS[(family, symbol)] = data.copy()


def _in_package(family: str | Path) -> bool:
    """A family of the package (a name, or a .cu file the package ships or
    generates), as opposed to a reader's own kernel file."""
    if not isinstance(family, Path):
        return True
    from thousand.cuda.compiler import cache_root

    path = family.resolve()
    homes = (Path(__file__).resolve().parent.parent, cache_root() / "generated")
    return any(path.is_relative_to(home.resolve()) for home in homes)


def wants_checked(family: str | Path) -> bool:
    """Whether a launch of `family` runs the checked build: as THOUSAND_CPU_CHECKED
    or checked_mode() says, else only for .cu files outside the package, where a
    bug is likeliest and the fast build would let a stray write pass silently."""
    setting = _SETTINGS["checked"]
    if setting is None:
        setting = _switch("THOUSAND_CPU_CHECKED")
    return (not _in_package(family)) if setting is None else setting


@contextlib.contextmanager
def checked_mode(on: bool = True):
    """Run launches from the checked build: every access is validated (slower).
    checked_mode(False) runs every kernel fast, a reader's own ones too."""
    before = _SETTINGS["checked"]
    _SETTINGS["checked"] = on
    try:
        yield
    finally:
        _SETTINGS["checked"] = before


def workers() -> int:
    """How many OS threads run blocks: THOUSAND_CPU_WORKERS, else every core. The
    runtime runs fewer where their fiber stacks would not fit in the process's
    memory mappings (vm.max_map_count; see runtime.cpp, workers_that_fit)."""
    value = os.environ.get("THOUSAND_CPU_WORKERS", "").strip()
    if not value:
        return os.cpu_count() or 1
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"THOUSAND_CPU_WORKERS={value!r}: give a whole number >= 1")
    return int(value)


@functools.cache
def module(family: str | Path, checked: bool) -> Module:
    """A family's CPU build (a name), or any .cu file's (a Path: the tests' probes)."""
    from thousand.kernels.family import gpu_only_kernels

    gpu_only = {} if isinstance(family, Path) else gpu_only_kernels(family)
    return Module(family, checked, gpu_only)


def _dims(what: str, dims) -> tuple[int, int, int]:
    dims = tuple(int(d) for d in dims) + (1,) * (3 - len(tuple(dims)))
    if len(dims) != 3:
        raise ValueError(f"{what} has more than three dimensions: {dims}")
    return dims


def check_config(name: str, grid, block, shared: int) -> None:
    """The checks cuLaunchKernel makes, with messages that say which limit."""
    threads = block[0] * block[1] * block[2]
    problem = None
    if min(block) < 1 or min(grid) < 1:
        problem = "every grid and block dimension must be at least 1"
    elif threads > MAX_THREADS_PER_BLOCK:
        problem = f"a block of {threads} threads; CUDA allows at most 1024"
    elif any(b > m for b, m in zip(block, MAX_BLOCK_DIM, strict=True)):
        problem = f"block dimensions are limited to {MAX_BLOCK_DIM}"
    elif any(g > m for g, m in zip(grid, MAX_GRID_DIM, strict=True)):
        problem = f"grid dimensions are limited to {MAX_GRID_DIM}"
    elif shared > build.MAX_DYNAMIC_SHARED:
        problem = f"{shared} bytes of dynamic shared memory; at most 227 KiB"
    if problem:
        raise RuntimeError(
            f"launch of {name} with grid={grid} block={block} failed: {problem}"
        )


def _argument(k: Kernel, i: int, code: str, value, buffers: list):
    pname = k.params[i] if i < len(k.params) else f"#{i}"
    if code == "P":
        if not isinstance(value, DeviceArray):
            raise TypeError(
                f"{k.name}: parameter {pname!r} is a pointer; pass a device array "
                f"(thousand.cuda.to_device / empty), not {type(value).__name__}"
            )
        base, size = value.allocation
        buffers.append((base, size, pname))
        return ctypes.c_void_p(value.ptr)
    if code not in SCALARS:
        raise TypeError(
            f"{k.name}: parameter {pname!r} has a type the CPU backend cannot pass"
        )
    np_type, c_type = SCALARS[code]
    if not isinstance(value, np_type):
        raise TypeError(
            f"{k.name}: parameter {pname!r} is {np.dtype(np_type).name} in C++; pass "
            f"np.{np.dtype(np_type).name}(...), not {type(value).__name__}"
        )
    return c_type(value)


def launch(family, name, grid, block, *args, shared: int = 0, trace=None) -> None:
    """Run `name` from kernels/<family>.cu over the grid; faults raise KernelFault.

    `trace` (a Trace) records the global and shared accesses of its first blocks.
    """
    grid, block = _dims("grid", grid), _dims("block", block)
    check_config(name, grid, block, shared)
    checked = wants_checked(family) or trace is not None
    mod = module(family, checked)
    k = mod.kernel(name)
    if len(args) != len(k.signature):
        raise TypeError(
            f"{name} takes {len(k.signature)} arguments ({', '.join(k.params)}), "
            f"got {len(args)}"
        )
    buffers: list = []
    values = [
        _argument(k, i, c, a, buffers)
        for i, (c, a) in enumerate(zip(k.signature, args, strict=True))
    ]
    argv = (ctypes.c_void_p * max(len(values), 1))(
        *[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in values]
    )
    names = [ctypes.c_char_p(n.encode()) for _, _, n in buffers]
    table = (_Buffer * max(len(buffers), 1))(
        *[_Buffer(b, s, n.value) for (b, s, _), n in zip(buffers, names, strict=True)]
    )
    error = ctypes.create_string_buffer(1024)
    spec = _Spec(
        grid=(ctypes.c_uint32 * 3)(*grid),
        block=(ctypes.c_uint32 * 3)(*block),
        workers=1 if trace is not None else workers(),
        checked=int(checked),
        n_buffers=len(buffers),
        buffers=table,
        tls_touch=mod.tls_touch,
        module_base=mod.base,
        error=ctypes.cast(error, ctypes.c_char_p),
        error_size=len(error),
    )
    if trace is not None:
        spec.trace = trace.records.ctypes.data
        spec.trace_capacity = len(trace.records)
        spec.trace_blocks = trace.blocks
    if _run(k, spec, argv) != 0:
        raise KernelFault(error.value.decode(errors="replace"))
    if trace is not None:
        trace.finish(spec.trace_count, mod, name, [n for _, _, n in buffers])


# How long Python waits in C at a time: between waits it runs its Ctrl-C handler.
WAIT_SLICE_MS = 50


def _run(k: Kernel, spec: _Spec, argv) -> int:
    """Run the grid to the end: 0, or 1 with spec.error set. Ctrl-C stops the
    workers, then raises KeyboardInterrupt naming where the kernel was."""
    rt = runtime()
    spec.handle = None
    try:
        if k.launcher(ctypes.byref(spec), argv) == 2:  # no stacks or threads
            from .memory import mapping_advice

            raise MemoryError(spec.error.decode(errors="replace") + mapping_advice())
        while not rt.thousand_wait_grid(spec.handle, WAIT_SLICE_MS):
            pass
    except KeyboardInterrupt:
        if not spec.handle:  # it came before the grid started
            raise
        rt.thousand_cancel_grid(spec.handle)
        # the workers read argv and spec: they must stop before this frame ends
        while True:
            try:
                if rt.thousand_wait_grid(spec.handle, WAIT_SLICE_MS):
                    break
            except KeyboardInterrupt:
                continue  # a second Ctrl-C: we are stopping already
        rt.thousand_finish_grid(spec.handle)
        raise KeyboardInterrupt(spec.error.decode(errors="replace")) from None
    return rt.thousand_finish_grid(spec.handle)


class Trace:
    """Room for the accesses of a launch's first `blocks` blocks (see pictures.py)."""

    def __init__(self, blocks: int = 1, capacity: int = 1 << 16):
        self.blocks = blocks
        self.records = np.zeros(capacity, ACCESS_DTYPE)

    def finish(self, count, mod, kernel, buffer_names):
        if count > len(self.records):
            raise RuntimeError(
                f"{kernel} made {count} accesses; the trace holds {len(self.records)}"
            )
        self.records = self.records[:count]
        self.module = mod
        self.kernel = kernel
        self.buffer_names = buffer_names
