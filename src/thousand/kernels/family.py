"""What every kernel family declares, so tests and benchmarks can iterate over it.

A family module (`vector_add.py`) defines `<op>_ref`, one launcher per version,
`<op>(..., version=N)`, and `FAMILY`, the metadata below. Work (bytes moved or FLOPs)
is a formula of the size, so GB/s and GFLOP/s are computed, never typed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Version:
    number: int
    kernel: str  # the extern "C" __global__ name in the .cu file
    teaches: str  # one line: what this rung shows
    run: Callable  # launcher: run(*inputs, out=None, block=...)
    blocks: tuple = (128, 256)  # block shapes the GPU tests try
    default_block: tuple | int = 256
    # Why the CPU backend cannot run it (tensor cores, inline PTX), or None. Its
    # source must sit inside `#ifndef THOUSAND_ON_CPU` so g++ never sees it.
    gpu_only: str | None = None
    # A version that rounds differently from its family (TF32 tensor cores) states
    # its own bound; None keeps the family's.
    tolerance: float | None = None
    # The library call it is measured against, a key of bench.baselines (None: the
    # family's own), e.g. cuBLAS with TF32 on for a TF32 kernel.
    baseline: str | None = None
    # For an op used in place (kv_append into its cache): the index of the input
    # the benchmark passes as `out`, so that it times what a user runs. None: the
    # version's own output.
    timed_out: int | None = None
    # For an output that depends on the launch and not only on the inputs (which
    # block and thread wrote each element): ref(*inputs, block=...) checks this
    # version instead of the family's ref. None: the family's ref.
    ref: Callable | None = None


@dataclass(frozen=True)
class Family:
    name: str
    versions: tuple[Version, ...]
    ref: Callable  # NumPy reference: ref(*inputs) -> array
    make_inputs: Callable  # make_inputs(rng, size) -> tuple of arrays
    check_sizes: tuple[tuple[int, ...], ...]  # awkward sizes: 1, primes, ragged
    bench_size: tuple[int, ...]
    bytes_moved: Callable[[tuple], int] | None = None  # fewest bytes through DRAM
    flops: Callable[[tuple], int] | None = None
    tolerance: float = 0.0  # max |out - ref| / max(|ref|, 1): 0 means bit-exact
    out_dtype: type = np.float32  # what the kernels write
    # What the benchmarks time, when the checks' inputs are chosen to stress the
    # arithmetic (softmax's huge logits) rather than to be a workload; None: the
    # same make_inputs. The kernel and its baselines always get the same data.
    typical_inputs: Callable | None = None
    # Kernels of the .cu file that are not rungs of the ladder but steps some
    # versions launch around their main kernel (a layout change, an ordered sum):
    # checked through the versions that use them.
    helpers: tuple[str, ...] = ()

    def timed_inputs(self, rng: np.random.Generator, size: tuple) -> tuple:
        """The inputs a benchmark times: typical_inputs, else make_inputs."""
        return (self.typical_inputs or self.make_inputs)(rng, size)

    def version(self, number: int) -> Version:
        known = [v.number for v in self.versions]
        # '4' or 4.0 would otherwise read as a missing version 4
        if isinstance(number, bool) or not isinstance(number, int | np.integer):
            raise ValueError(
                f"{self.name}: version must be an int such as {known[-1]}, "
                f"got {number!r} ({type(number).__name__})"
            )
        for v in self.versions:
            if v.number == number:
                return v
        raise ValueError(f"{self.name}: no version {number}; versions are {known}")


def tolerance(family: Family, version: Version) -> float:
    return family.tolerance if version.tolerance is None else version.tolerance


def pick(family: Family, version: int) -> Callable:
    """The launcher of `version`, with a clear error for one that does not exist."""
    return family.version(version).run


def rel_error(out: np.ndarray, ref: np.ndarray) -> float:
    """Largest elementwise error, relative to the reference's magnitude (at least 1)."""
    ref64 = np.asarray(ref, dtype=np.float64)
    diff = np.abs(np.asarray(out, dtype=np.float64) - ref64)
    if not np.all(np.isfinite(out)):
        return float("inf")
    return float(diff.max(initial=0.0) / max(np.abs(ref64).max(initial=0.0), 1.0))


KERNEL_DIR = Path(__file__).resolve().parent


def gpu_only_kernels(family: str) -> dict[str, str]:
    """Kernels of `family` the CPU backend skips, with the reason."""
    mod = importlib.import_module(f"thousand.kernels.{family}")
    return {v.kernel: v.gpu_only for v in mod.FAMILY.versions if v.gpu_only}


def all_families() -> list[Family]:
    """Every family: each `<name>.cu` here with its sibling `<name>.py`."""
    found = []
    for cu in sorted(KERNEL_DIR.glob("*.cu")):
        mod = importlib.import_module(f"thousand.kernels.{cu.stem}")
        found.append(mod.FAMILY)
    return found
