"""B15: a kernel of this package as a PyTorch op, with its backward.

A CUDA extension is worth writing for an op PyTorch lacks or a fusion it cannot
do. GELU is neither (F.gelu(x, approximate="tanh") computes it), which is why it
is bound here: every step is the same, and PyTorch can check each one.

    load()                    builds gelu_extension.cpp/.cu once (ninja), imports it
    thousand::gelu            a torch.library custom op: autograd and torch.compile
                              see it like any op of PyTorch's
    thousand::gelu_backward   its backward, an op too
    thousand::launch_empty    a kernel that does nothing, by the same road
                              (b15-call-cost times it)

    y = torch.ops.thousand.gelu(x)   # x: float32, contiguous, any shape
    y = gelu(x)                      # the same op

CUDA tensors go to the extension. CPU tensors go to the very same gelu.cu on this
package's CPU backend, so the op, its autograd and its registration also run (and
are tested) on a machine without a GPU.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from thousand.cuda import INDEX_LIMIT, use_backend
from thousand.cuda.compiler import KERNEL_DIR, cache_error, cache_root, nvcc_path
from thousand.cuda.errors import CudaUnavailable, NoGpu
from thousand.kernels.gelu import gelu as gelu_launcher
from thousand.kernels.gelu_backward import gelu_backward as gelu_backward_launcher
from thousand.optional import require

torch = require("torch", "B15's PyTorch extension")

HERE = Path(__file__).resolve().parent
# the host side (C++ compiler: checks, binding) and the launches (nvcc)
SOURCES = (HERE / "gelu_extension.cpp", HERE / "gelu_extension.cu")
SOURCE = SOURCES[1]  # the file that includes the package's kernels
EMPTY = HERE / "empty.cu"  # the empty kernel, which PyCUDA also compiles alone
NAME = "thousand_gelu"  # the extension's Python module
# Everything the build compiles: a change to any of them is a new build.
KERNEL_FILES = ("gelu.cu", "gelu_backward.cu", "gelu.cuh")
BUILT_FROM = (*SOURCES, EMPTY, *(KERNEL_DIR / f for f in KERNEL_FILES))


class NinjaMissing(CudaUnavailable):
    """torch.utils.cpp_extension builds with ninja, and none was found."""


class ExtensionBuildError(RuntimeError):
    """nvcc or the linker rejected the extension: the message has their output."""


def cuda_toolkit() -> str:
    """The CUDA toolkit's root (bin/nvcc, include/cuda_runtime.h, lib64/libcudart).

    PyTorch takes $CUDA_HOME, or else two folders up from the nvcc on PATH: wrong
    where that nvcc is a wrapper script (/usr/local/bin/nvcc running the real one
    in /usr/local/cuda-13.0/bin). nvcc itself knows: its dry run prints TOP.
    """
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root and (Path(root) / "bin" / "nvcc").exists():
            return root
    nvcc = nvcc_path()  # NvccMissing, saying how to get it
    dry = subprocess.run(
        [nvcc, "-dryrun", "-c", "x.cu", "-o", "x.o"],  # reads and writes nothing
        capture_output=True,
        text=True,
    )
    top = re.search(r"^#\$ TOP=(.+)$", dry.stderr + dry.stdout, re.MULTILINE)
    if top:
        return str(Path(top.group(1).strip()).resolve())
    return str(Path(nvcc).resolve().parent.parent)


def _find_ninja() -> None:
    """Put ninja on PATH if it is only in this Python's own bin folder (pip install
    ninja into a virtual environment that was not activated): PyTorch runs `ninja`
    from PATH."""
    if shutil.which("ninja"):
        return
    here = Path(sys.executable).parent
    if (here / "ninja").exists():
        os.environ["PATH"] = f"{here}{os.pathsep}{os.environ.get('PATH', '')}"
        return
    raise NinjaMissing(
        "ninja is not installed, and torch.utils.cpp_extension builds with it: "
        "pip install ninja"
    )


def build_dir(arch: str, toolkit: str) -> Path:
    """A build folder outside the repository, named by what goes into the build:
    the sources, PyTorch's and Python's versions (the module links to both), the
    GPU architecture and the toolkit."""
    h = hashlib.sha256()
    for path in BUILT_FROM:
        h.update(path.read_bytes())
    h.update(f"{torch.__version__} {sys.version_info[:2]} {arch} {toolkit}".encode())
    folder = cache_root() / "torch-extensions" / f"{NAME}-{h.hexdigest()[:16]}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise cache_error(folder, e) from e
    return folder


# --8<-- [start:load]
@functools.cache
def load():
    """The extension's module, built on first use and kept in the build folder (a
    later process only imports it); the same module for the rest of the process."""
    if torch.version.cuda is None:
        raise NoGpu(
            f"PyTorch {torch.__version__} is a CPU build: the extension needs "
            "PyTorch built with CUDA, on a machine with an NVIDIA GPU"
        )
    if not torch.cuda.is_available():
        raise NoGpu("PyTorch sees no CUDA GPU (torch.cuda.is_available() is False)")
    _find_ninja()
    toolkit = cuda_toolkit()
    os.environ["CUDA_HOME"] = toolkit  # read when cpp_extension is imported...
    from torch.utils import cpp_extension

    cpp_extension.CUDA_HOME = toolkit  # ...which torch.compile may have done already
    major, minor = torch.cuda.get_device_capability()
    arch = os.environ.setdefault("TORCH_CUDA_ARCH_LIST", f"{major}.{minor}")
    folder = build_dir(arch, toolkit)
    try:
        return cpp_extension.load(
            name=NAME,
            sources=[str(p) for p in SOURCES],
            extra_include_paths=[str(KERNEL_DIR)],  # #include "gelu.cu" finds it
            extra_cflags=["-O3"],
            extra_cuda_cflags=["-O3"],  # the host code too: nvcc's default is -O0
            build_directory=str(folder),
            verbose=False,
        )
    except (RuntimeError, subprocess.CalledProcessError) as e:
        raise ExtensionBuildError(
            f"building {NAME} ({', '.join(p.name for p in SOURCES)}) with the CUDA "
            f"toolkit in {toolkit} failed (build folder {folder}): {e}"
        ) from e


# --8<-- [end:load]


def _check(t: torch.Tensor, name: str, like: torch.Tensor | None = None) -> None:
    """What gelu_extension.cpp's check() refuses, refused alike on the CPU and in
    the fake (so torch.compile reports it while tracing)."""
    if t.dtype != torch.float32:
        raise TypeError(
            f"thousand::gelu: {name} must be float32, got {t.dtype} (use .float())"
        )
    if not t.is_contiguous():
        raise ValueError(
            f"thousand::gelu: {name} must be contiguous, got strides {t.stride()} "
            "(use .contiguous())"
        )
    if t.numel() > INDEX_LIMIT:
        raise ValueError(
            f"thousand::gelu: {name} has {t.numel()} elements; the kernels' int "
            f"indices reach {INDEX_LIMIT}"
        )
    if like is not None and t.shape != like.shape:
        raise ValueError(
            f"thousand::gelu: {name} must have x's shape {list(like.shape)}, got "
            f"{list(t.shape)}"
        )
    if like is not None and t.device != like.device:
        raise ValueError(
            f"thousand::gelu: {name} must be on x's device {like.device}, got "
            f"{t.device}"
        )


def _on_cpu_backend(launcher, *tensors: torch.Tensor) -> torch.Tensor:
    """A launcher of gelu.cu (or gelu_backward.cu) on CPU tensors, run by the CPU
    backend: the kernel compiled by g++. The tensors go over as NumPy views of
    their memory, flat (the kernels are elementwise). The backend is switched for
    the process while the launch runs: one thread at a time."""
    arrays = [t.detach().reshape(-1).numpy() for t in tensors]
    # the version the extension would pick: float4 (v2) only from 16-byte addresses
    aligned = all(a.ctypes.data % 16 == 0 for a in arrays)
    before = use_backend("cpu")  # the CPU backend, whatever runs the GPU's kernels
    try:
        out = launcher(*arrays, version=2 if aligned else 1)
    finally:
        use_backend(before)
    return torch.from_numpy(out).view(tensors[0].shape)


# --8<-- [start:op]
@torch.library.custom_op("thousand::gelu", mutates_args=(), device_types="cuda")
def gelu(x: torch.Tensor) -> torch.Tensor:
    """GELU (tanh form) of every element of x: float32, contiguous, any shape."""
    return load().gelu_forward(x)


@torch.library.custom_op(
    "thousand::gelu_backward", mutates_args=(), device_types="cuda"
)
def gelu_backward(dy: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """dy * gelu'(x): the gradient of gelu at x, for the gradient dy of its output."""
    return load().gelu_backward(dy, x)


@gelu.register_kernel("cpu")
def _(x):
    _check(x, "x")
    return _on_cpu_backend(gelu_launcher, x)


@gelu_backward.register_kernel("cpu")
def _(dy, x):
    _check(x, "x")
    _check(dy, "dy", like=x)
    return _on_cpu_backend(gelu_backward_launcher, dy, x)


# --8<-- [end:op]


# --8<-- [start:fake]
# What torch.compile traces with: tensors that have a shape, a dtype and a device
# but no data. The output's metadata is all a fake returns.
@gelu.register_fake
def _(x):
    _check(x, "x")
    return torch.empty_like(x)


@gelu_backward.register_fake
def _(dy, x):
    _check(x, "x")
    _check(dy, "dy", like=x)
    return torch.empty_like(x)


# --8<-- [end:fake]


# --8<-- [start:autograd]
def _save_x(ctx, inputs, output):
    (x,) = inputs
    ctx.save_for_backward(x)  # gelu'(x) needs x, not y


def _backward(ctx, dy):
    (x,) = ctx.saved_tensors
    # autograd may pass a strided gradient (y.sum()'s is one value broadcast,
    # stride 0); the kernel reads dense memory
    return gelu_backward(dy.contiguous(), x)


gelu.register_autograd(_backward, setup_context=_save_x)
# --8<-- [end:autograd]


# --8<-- [start:empty]
@torch.library.custom_op("thousand::launch_empty", mutates_args=(), device_types="cuda")
def launch_empty(on: torch.Tensor) -> None:
    """One launch of a kernel that does nothing, on `on`'s GPU, through the op."""
    load().launch_empty(on)


# --8<-- [end:empty]


@launch_empty.register_fake
def _(on):
    return None
