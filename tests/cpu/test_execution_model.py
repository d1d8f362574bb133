"""B4's kernels on the CPU backend: the divergence reference against step-by-step
arithmetic, every number of paths on both versions, the occupancy copies with
large shared-memory footprints, bad input refused, and the occupancy calculator
refusing to pretend without a GPU."""

import numpy as np
import pytest

from thousand.kernels.divergence import (
    MAX_PATHS,
    STEPS,
    divergence,
    divergence_numpy,
    divergence_ref,
    path_of,
    rotation,
)
from thousand.kernels.family import rel_error
from thousand.kernels.occupancy import occupancy, shared_limit

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")
rng = np.random.default_rng(4)
ALL_PATHS = [1, 2, 4, 8, 16, 32]


def turns_by_loop(x, paths, per_warp):
    """STEPS turns of (x, 0) one at a time, in float64: no closed form."""
    out = []
    for i, v in enumerate(x):
        p = (i // 32 if per_warp else i) % paths
        (c, minus_s), (s, _) = rotation(p)
        u, w = float(v), 0.0
        for _ in range(STEPS):
            u, w = c * u + minus_s * w, s * u + c * w
        out.append(u)
    return np.array(out)


@pytest.mark.parametrize("per_warp", [False, True])
@pytest.mark.parametrize("paths", [1, 4, 32])
def test_closed_form_matches_turning_step_by_step(paths, per_warp):
    x = rng.standard_normal(300, dtype=np.float32)
    ref = divergence_ref(x, paths, per_warp)
    loop = turns_by_loop(x, paths, per_warp)
    # the reference is the float64 closed form rounded once to float32
    np.testing.assert_allclose(ref, loop, rtol=2**-23, atol=1e-30)


def test_paths_are_distinct_functions():
    gains = [divergence_ref(np.ones(1, np.float32), 1)[0]]
    for p in range(1, MAX_PATHS):
        (c, _), (s, _) = rotation(p)
        u, w = 1.0, 0.0
        for _ in range(STEPS):
            u, w = c * u - s * w, s * u + c * w
        gains.append(u)
    assert len({round(g, 6) for g in gains}) == MAX_PATHS


@pytest.mark.parametrize("paths", ALL_PATHS)
def test_per_thread_paths_split_every_warp_per_warp_paths_none(paths):
    i = np.arange(32 * 64).reshape(64, 32)  # 64 warps of 32 lanes
    per_thread = path_of(i, paths, per_warp=False)
    per_warp = path_of(i, paths, per_warp=True)
    assert all(len(set(row)) == paths for row in per_thread)
    assert all(len(set(row)) == 1 for row in per_warp)
    assert len(set(per_warp[:, 0])) == paths  # the warps still use every path


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("paths", ALL_PATHS)
def test_kernels_on_every_number_of_paths(version, paths):
    x = rng.standard_normal(3001, dtype=np.float32)
    out = divergence(x, version=version, block=64, paths=paths)
    assert rel_error(out, divergence_ref(x, paths, per_warp=version == 2)) <= 1e-5


def test_the_versions_send_elements_down_different_paths():
    x = np.ones(64, np.float32)
    v1, v2 = divergence(x, version=1, paths=32), divergence(x, version=2, paths=32)
    assert np.unique(v1[:32]).size == 32 and np.unique(v2[:32]).size == 1


def test_numpy_baseline_is_the_same_function():
    x = rng.standard_normal(5000, dtype=np.float32)
    assert rel_error(divergence_numpy(x, 4)(), divergence_ref(x, 4)) <= 1e-5


@pytest.mark.parametrize("paths", [0, 3, 64, 2.0, True])
def test_paths_must_be_a_power_of_two_up_to_32(paths):
    with pytest.raises(ValueError, match="power of two from 1 to 32"):
        divergence(np.ones(8, np.float32), paths=paths)


def test_per_warp_version_wants_whole_warps():
    with pytest.raises(ValueError, match="multiple of 32"):
        divergence(np.ones(8, np.float32), version=2, block=48)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_copies_with_a_large_shared_memory_footprint(version):
    x = rng.standard_normal(70_001, dtype=np.float32)
    out = occupancy(x, version=version, block=128, shared=200 * 1024)
    np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize(
    "version,shared,why",
    [
        (1, 512, "from 1024"),  # less than the one float per thread v1 passes through
        (2, -1, "from 0"),
        (3, 10**9, "to "),
        (1, 2048.0, "whole bytes"),
    ],
)
def test_footprints_out_of_range_are_refused(version, shared, why):
    with pytest.raises(ValueError, match=why):
        occupancy(np.ones(8, np.float32), version=version, block=256, shared=shared)
    assert shared_limit() == 227 * 1024


def test_the_occupancy_calculator_needs_a_gpu():
    from thousand.cuda.occupancy import occupancy as predicted
    from thousand.cuda.occupancy import sm_limits

    for ask in (sm_limits, lambda: predicted("copy", "copy_v1", 256)):
        with pytest.raises(RuntimeError, match="runs only on a GPU"):
            ask()
