"""Compile each family's `.cu` file once per process; PTX for the CPU tests."""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from .device import driver
from .errors import BuildCacheError, NvccMissing

KERNEL_DIR = Path(__file__).resolve().parent.parent / "kernels"
NVCC_FLAGS = ["-std=c++17", "-lineinfo"]
# Families built for one GPU's own instruction set rather than the device's default:
# wgmma and setmaxnreg exist only in sm_90a, Hopper's architecture-specific target.
TARGETS = {
    "matmul_wgmma": ("compute_90a", "sm_90a"),
    "matmul_wgmma_tf32": ("compute_90a", "sm_90a"),
}


def nvcc_path() -> str:
    """Find nvcc on PATH or under $CUDA_HOME, or say how to get it."""
    found = shutil.which("nvcc")
    if not found and os.environ.get("CUDA_HOME"):
        candidate = Path(os.environ["CUDA_HOME"]) / "bin" / "nvcc"
        found = str(candidate) if candidate.exists() else None
    if not found:
        raise NvccMissing(
            "nvcc (the CUDA compiler) is not on PATH and not under $CUDA_HOME/bin; "
            "install the CUDA toolkit or add its bin/ to PATH"
        )
    return found


def cache_root() -> Path:
    """Where compiled and generated files are kept: $THOUSAND_CACHE_DIR, else
    $XDG_CACHE_HOME/thousand-points (~/.cache/thousand-points)."""
    root = os.environ.get("THOUSAND_CACHE_DIR")
    if root:
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(xdg) / "thousand-points"


def cache_error(folder: Path, error: OSError) -> BuildCacheError:
    """An OSError while writing the cache, as an error saying where and what to do."""
    if error.errno == errno.ENOSPC:
        why = "the disk is full (No space left on device)"
    else:
        why = f"it cannot be written ({error.strerror or error})"
    return BuildCacheError(
        f"the build cache {folder} cannot be used: {why}; set THOUSAND_CACHE_DIR "
        "to a writable folder with free space"
    )


def generated_source(stem: str, text: str) -> Path:
    """A .cu file with `text`, written once under the cache and named by its hash,
    for kernels built from a template (reduce with another operator or type)."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = cache_root() / "generated" / f"{stem}-{digest}.cu"
    if not path.exists():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(text)
            os.replace(tmp, path)  # atomic: a parallel process never reads half a file
        except OSError as e:
            raise cache_error(path.parent, e) from e
    return path


def source_path(family: str | Path) -> Path:
    """kernels/<family>.cu for a family name; any other .cu file by its path."""
    path = Path(family) if isinstance(family, Path) else KERNEL_DIR / f"{family}.cu"
    if not path.exists():
        raise FileNotFoundError(f"no kernel family {family!r}: {path} does not exist")
    return path


@functools.cache
def module(family: str | Path):
    """The compiled module of `kernels/<family>.cu` (cached for the process)."""
    driver()
    nvcc = nvcc_path()
    from pycuda.compiler import SourceModule

    # a generated source (matmul_wgmma-owners-<hash>.cu) takes its family's target
    key = family if isinstance(family, str) else Path(family).name.split("-")[0]
    arch, code = TARGETS.get(key, (None, None))
    return SourceModule(
        source_path(family).read_text(),
        nvcc=nvcc,
        options=NVCC_FLAGS,
        arch=arch,
        code=code,
        no_extern_c=True,  # the .cu files declare their kernels extern "C" themselves
        include_dirs=[str(KERNEL_DIR), str(source_path(family).parent)],
    )


@functools.cache
def kernel(family: str | Path, name: str):
    """One `__global__` function of a family, ready to launch."""
    return module(family).get_function(name)


def compile_ptx(path: Path, arch: str, out: Path) -> str:
    """Compile a .cu file to PTX with nvcc; return what nvcc printed (its warnings).

    Needs no GPU: the CPU test layer uses it to prove every kernel compiles.
    """
    cmd = [
        nvcc_path(),
        *NVCC_FLAGS,
        "-ptx",
        f"-arch={arch}",
        "-I",
        str(KERNEL_DIR),
        "-Xcompiler",
        "-Wall",
        str(path),
        "-o",
        str(out),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"nvcc failed on {path.name} for {arch}:\n{done.stderr}")
    return done.stderr + done.stdout
