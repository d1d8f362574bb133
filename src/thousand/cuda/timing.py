"""Time GPU work with CUDA events: warm up, flush L2 between repeats, keep samples.

On the CPU backend launches are synchronous and the host clock times them; such
figures are CPU emulation times (see backend.timing_label), never GPU figures.
"""

from __future__ import annotations

import functools
import statistics
import time

from .backend import on_cpu
from .device import device_info, driver


@functools.cache
def _flusher():
    return L2Flusher()


class L2Flusher:
    """Writes a buffer twice the L2 size: no repeat reads what the last one cached."""

    def __init__(self):
        drv = driver()
        self.nbytes = 2 * device_info()["l2_cache_bytes"]
        self.buf = drv.mem_alloc(self.nbytes)

    def __call__(self):
        driver().memset_d32(self.buf, 0, self.nbytes // 4)


def time_ms(
    fn, *, warmup: int = 3, repeat: int = 20, flush_l2: bool = True
) -> list[float]:
    """Milliseconds of `fn()` per repeat, measured with events around each call."""
    if on_cpu():
        return _cpu_time_ms(fn, warmup, repeat)
    drv = driver()
    flush = _flusher() if flush_l2 else None
    start, stop = drv.Event(), drv.Event()
    for _ in range(warmup):
        fn()
    drv.Context.synchronize()
    samples = []
    for _ in range(repeat):
        if flush:
            flush()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        samples.append(stop.time_since(start))
    return samples


def _cpu_time_ms(fn, warmup: int, repeat: int) -> list[float]:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    return samples


def median(samples: list[float]) -> float:
    return statistics.median(samples)
