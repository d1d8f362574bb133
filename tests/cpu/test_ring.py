"""B19's ring all-reduce (thousand.distributed.ring) on the CPU backend: every rank ends
with the sum, bit for bit the same on every rank, and each rank sends 2 (n - 1) / n of
the buffer, the figure bus bandwidth is built on."""

import numpy as np
import pytest

from thousand.cuda import to_device
from thousand.distributed.ring import ALIGN, chunk_bounds, ring_all_reduce

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
@pytest.mark.parametrize("size", [1, 3, 64, 1031])
def test_every_rank_ends_with_the_same_sum(n, size):
    rng = np.random.default_rng(n * 1000 + size)
    host = [rng.standard_normal(size, dtype=np.float32) for _ in range(n)]
    buffers = ring_all_reduce([to_device(h) for h in host])
    want = np.sum(np.array(host, np.float64), axis=0)
    got = [b.get() for b in buffers]
    assert np.abs(got[0] - want).max() <= 1e-5 * max(np.abs(want).max(), 1)
    for g in got[1:]:  # the all-gather copies one finished chunk to everyone
        assert np.array_equal(g, got[0])


@pytest.mark.parametrize("n", [2, 4, 8])
def test_each_rank_sends_two_n_minus_one_over_n_of_the_buffer(n):
    size = 64 * n * ALIGN
    log = []
    ring_all_reduce([to_device(np.ones(size, np.float32)) for _ in range(n)], log)
    for r in range(n):
        sent = sum(e for _, _, sender, _, e in log if sender == r)
        assert sent == 2 * (n - 1) * size // n
    steps = {(phase, step) for phase, step, *_ in log}
    assert len(steps) == 2 * (n - 1)  # n - 1 steps in each phase


def test_chunks_start_on_16_byte_boundaries_and_cover_the_buffer():
    for size, n in [(1031, 3), (2, 4), (4096, 7)]:
        bounds = chunk_bounds(size, n)
        assert bounds[0][0] == 0 and bounds[-1][1] == size
        assert all(lo % ALIGN == 0 and lo <= hi for lo, hi in bounds)
        assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:], strict=False))


def test_bad_buffers_are_refused():
    one = to_device(np.ones(8, np.float32))
    with pytest.raises(ValueError, match="at least one"):
        ring_all_reduce([])
    with pytest.raises(ValueError, match="must be a device array"):
        ring_all_reduce([one, np.ones(8, np.float32)])
    with pytest.raises(ValueError, match="1-D float32"):
        ring_all_reduce([one, to_device(np.ones(8, np.float64))])
    with pytest.raises(ValueError, match="has 4 elements"):
        ring_all_reduce([one, to_device(np.ones(4, np.float32))])


def test_the_process_ring_needs_the_gpu_backend():
    from thousand.distributed.ring import ProcessRing

    with pytest.raises(RuntimeError, match="needs the GPU backend"):
        ProcessRing(64)


def test_bandwidth_terms_follow_nccl_tests():
    from thousand.distributed.bench import bus_factor, message_sizes

    assert bus_factor(2) == 1.0 and bus_factor(8) == 1.75
    sizes = message_sizes(1024)
    assert sizes[0] == 4096 and sizes[-1] == 2**30 and len(sizes) == 10
    assert 256 * 2**20 in sizes  # the size the target is read at
