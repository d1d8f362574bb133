"""Run kernel versions the way the checks and the benchmarks both need them."""

from __future__ import annotations

import numpy as np

from thousand.cuda import to_device
from thousand.kernels.family import Family, Version, rel_error, tolerance


def check_version(family: Family, version: Version, size: tuple, block, seed: int = 0):
    """Return (error, tolerance). The output starts as NaN, so an element the kernel
    never writes shows up as an infinite error instead of passing by luck."""
    rng = np.random.default_rng(seed)
    inputs = family.make_inputs(rng, size)
    expected = family.ref(*inputs)
    d_inputs = [to_device(a) for a in inputs]
    d_out = to_device(np.full(expected.shape, np.nan, dtype=np.float32))
    version.run(*d_inputs, out=d_out, block=block)
    return rel_error(d_out.get(), expected), tolerance(family, version)


def bench_inputs(family: Family, size: tuple | None = None) -> list:
    """The family's inputs at its benchmark size (or `size`), on the device (seed 0)."""
    host = family.make_inputs(np.random.default_rng(0), size or family.bench_size)
    return [to_device(a) for a in host]


def prepared_run(version: Version, d_inputs: list):
    """A no-argument launch of `version` into an output allocated once, here, so
    that timing it measures the kernel and not the allocator."""
    d_out = version.run(*d_inputs, block=version.default_block)

    def run():
        version.run(*d_inputs, out=d_out, block=version.default_block)

    return run
