"""Time GPU work with CUDA events: warm up, flush L2 between repeats, keep samples.

Each repeat queues, in order: the L2 flush, a `hold` kernel (hold.cu) that keeps the
GPU busy for a fraction of a millisecond, the start event, the work, the stop
event. While the GPU holds, the host runs the launcher (argument checks, PyCUDA's
argument packing: tens of microseconds of Python); so when the start event fires the
work is already queued and the events time the GPU's work alone, as they would for
a launch from C++. If the host was slower than the hold (the start event had
already fired when the host finished issuing the work), the sample is taken again
with a hold twice as long, up to a few milliseconds.

Work that blocks the host until the GPU has done it (a synchronous copy such as
memcpy_htod) cannot be queued ahead: the start event has always fired by the time
it returns. Time it with hold=False: events alone, nothing held, nothing retaken.

On the CPU backend launches are synchronous and the host clock times them; such
figures are CPU emulation times (see backend.timing_label), never GPU figures.
"""

from __future__ import annotations

import functools
import statistics
import time

import numpy as np

from .backend import on_cpu
from .device import device_info, driver


@functools.cache
def _flusher():
    return L2Flusher()


HOLD_NS = 200_000  # first try; doubled up to MAX_HOLD_NS while the host is slower
MAX_HOLD_NS = 3_200_000


@functools.cache
def _hold():
    from pathlib import Path

    from .compiler import kernel

    return kernel(Path(__file__).with_name("hold.cu"), "hold")


class L2Flusher:
    """Writes a buffer twice the L2 size: no repeat reads what the last one cached."""

    def __init__(self):
        drv = driver()
        self.nbytes = 2 * device_info()["l2_cache_bytes"]
        self.buf = drv.mem_alloc(self.nbytes)

    def __call__(self):
        driver().memset_d32(self.buf, 0, self.nbytes // 4)


def time_ms(
    fn, *, warmup: int = 3, repeat: int = 20, flush_l2: bool = True, hold: bool = True
) -> list[float]:
    """Milliseconds of `fn()` per repeat, measured with events around each call.
    hold=False for work that blocks the host until it is done (see above)."""
    if on_cpu():
        return host_time_ms(fn, warmup=warmup, repeat=repeat)
    drv = driver()
    flush = _flusher() if flush_l2 else None
    start, stop = drv.Event(), drv.Event()
    for _ in range(warmup):
        fn()
    drv.Context.synchronize()
    spin, ns = _hold(), HOLD_NS
    samples = []
    while len(samples) < repeat:
        if flush:
            flush()
        if hold:
            spin(np.uint64(ns), grid=(1, 1, 1), block=(1, 1, 1))
        start.record()
        fn()
        stop.record()
        host_was_late = start.query()  # the GPU reached `start` before `fn` was queued
        stop.synchronize()
        if hold and host_was_late and ns < MAX_HOLD_NS:
            ns *= 2
            continue
        samples.append(stop.time_since(start))
    return samples


def host_time_ms(fn, *, warmup: int = 1, repeat: int = 20) -> list[float]:
    """Milliseconds of `fn()` per repeat on the host clock: CPU work (NumPy), and
    every launch on the CPU backend, where a launch has finished when it returns."""
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
