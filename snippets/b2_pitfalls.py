"""Three ways to mismeasure a memory-bound kernel, each next to the right way (B2)."""

import time

import numpy as np

from thousand.cuda import (
    device_info,
    empty,
    fill,
    launch,
    median,
    on_cpu,
    synchronize,
    time_ms,
    timing_label,
)
from thousand.kernels.axpy import axpy

label = timing_label()  # "GPU", or "CPU emulation" where no GPU ran it
n = 2**20 if on_cpu() else 2**27  # the CPU backend runs every thread: keep it small
a = np.float32(0.5)
dx, dy, d_out = empty(n), empty(n), empty(n)
fill(dx, 1.0)
fill(dy, 2.0)


def step():
    axpy(a, dx, dy, out=d_out)


def host_ms(fn, sync: bool) -> float:
    t0 = time.perf_counter()
    fn()
    if sync:
        synchronize()
    return (time.perf_counter() - t0) * 1e3


print(f"axpy v2, n = 2^{n.bit_length() - 1}, {label} times")

# 1. The first call loads the module (and compiles it, if no cached copy exists).
first = host_ms(step, sync=True)
second = host_ms(step, sync=True)
print(f"first call {first:9.3f} ms, second call {second:7.3f} ms")

# 2. A launch returns once it is queued: without synchronize() the host clock
#    stops before the kernel has done anything.
queued = host_ms(step, sync=False)
synchronize()
waited = host_ms(step, sync=True)
events = median(time_ms(step, repeat=10))
print(f"host clock without sync {queued:.3f} ms, with sync {waited:.3f} ms")
print(f"time_ms, median of 10:  {events:.3f} ms")

# 3. A memory-bound kernel needs enough warps in flight to cover the latency;
#    past one full wave of resident blocks, more threads buy little. launch()
#    directly, so that the grid is ours to choose rather than the launcher's.
sms = device_info()["sm_count"]
per_sm = device_info()["max_threads_per_sm"] // 256  # blocks of 256 resident per SM


def on_grid(blocks):
    args = (a, dx, dy, d_out, np.int32(n))
    return lambda: launch("axpy", "axpy_v2", (blocks,), (256,), *args)


for blocks in (1, sms, per_sm * sms, 8 * per_sm * sms, n // 4 // 256):
    ms = median(time_ms(on_grid(blocks), repeat=10))
    print(f"{blocks:>9,} blocks x 256 threads: {12 * n / ms / 1e6:9,.1f} GB/s")
