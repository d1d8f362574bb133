"""Run kernel versions the way the checks and the benchmarks both need them."""

from __future__ import annotations

import numpy as np

from thousand.cuda import to_device
from thousand.kernels.family import Family, Version, rel_error, tolerance


def on_device(a):
    """An input array copied to the device; anything else (attention's `causal`
    flag, a bool) passed through unchanged."""
    return to_device(a) if isinstance(a, np.ndarray) else a


def check_version(family: Family, version: Version, size: tuple, block, seed: int = 0):
    """Return (error, tolerance). The output starts as NaN (an integer output as the
    most negative integer), so an element the kernel never writes shows up as an
    infinite (or huge) error instead of passing by luck."""
    rng = np.random.default_rng(seed)
    inputs = family.make_inputs(rng, size)
    if version.ref is not None:  # the expected output depends on the launch
        expected = version.ref(*inputs, block=block)
    else:
        expected = family.ref(*inputs)
    dtype = np.dtype(family.out_dtype)
    floating = dtype.kind == "f" or dtype.name == "bfloat16"  # ml_dtypes': kind V
    start = np.nan if floating else np.iinfo(dtype).min
    d_inputs = [on_device(a) for a in inputs]
    d_out = to_device(np.full(expected.shape, start, dtype=dtype))
    version.run(*d_inputs, out=d_out, block=block)
    return rel_error(d_out.get(), expected), tolerance(family, version)


def bench_inputs(family: Family, size: tuple | None = None) -> list:
    """The family's inputs at its benchmark size (or `size`), on the device (seed 0)."""
    host = family.timed_inputs(np.random.default_rng(0), size or family.bench_size)
    return [on_device(a) for a in host]


def prepared_run(version: Version, d_inputs: list):
    """A no-argument launch of `version` into an output allocated once, here, so
    that timing it measures the kernel and not the allocator. An in-place op
    (version.timed_out) writes into the input it names, as its users call it."""
    if version.timed_out is not None:
        d_out = d_inputs[version.timed_out]
    else:
        d_out = version.run(*d_inputs, block=version.default_block)

    def run():
        version.run(*d_inputs, out=d_out, block=version.default_block)

    return run
