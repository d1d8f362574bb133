"""Every kernel version of the package, run on the CPU backend against its reference.

The same check as the GPU layer (tests/gpu/test_kernels.py), on the family's awkward
sizes up to CPU_MAX_ELEMENTS, in the checked build: an access outside the launch's
buffers fails the test with the kernel, block and thread. Versions marked GPU-only
(tensor cores, inline PTX) are skipped with their reason.
"""

import zlib

import numpy as np
import pytest

from thousand.bench.checks import check_version
from thousand.kernels.family import all_families

CPU_MAX_ELEMENTS = 1 << 17  # keeps the CPU layer fast; still 1, primes, ragged edges


def cpu_sizes(family):
    # a 0 in a size is an empty axis or a flag (attention's causal = 0): it must not
    # make a large size look empty
    small = lambda s: int(np.prod([max(int(n), 1) for n in s])) <= CPU_MAX_ELEMENTS  # noqa: E731
    return [s for s in family.check_sizes if small(s)]


CASES = [
    pytest.param(
        f,
        v,
        size,
        block,
        id=f"{v.kernel}-{'x'.join(map(str, size))}-b{block}".replace(" ", ""),
        marks=[pytest.mark.cpu_kernel(v.kernel)]
        + ([pytest.mark.skip(reason=f"GPU-only: {v.gpu_only}")] if v.gpu_only else []),
    )
    for f in all_families()
    for v in f.versions
    for size in cpu_sizes(f)
    for block in v.blocks
]


pytestmark = pytest.mark.usefixtures("cpu_backend_checked")


@pytest.mark.parametrize("family,version,size,block", CASES)
def test_matches_reference_on_cpu(family, version, size, block):
    seed = zlib.crc32(f"{version.kernel}{size}{block}".encode())  # as on the GPU
    err, tol = check_version(family, version, size, block, seed=seed)
    assert err <= tol, f"{version.kernel} at {size}, block {block}: error {err:.3g}"


def test_every_family_has_a_size_the_cpu_layer_runs():
    for f in all_families():
        assert cpu_sizes(f), f"{f.name}: no check size under {CPU_MAX_ELEMENTS}"
