"""Page-locked vs pageable host memory: a 64 MiB copy to the GPU from each (B5).

GPU only: page-locked memory and the DMA copies that use it belong to the driver
and the hardware, which the CPU backend does not model.
"""

import time

import numpy as np

from thousand.cuda import driver, on_cpu, timing_label

if on_cpu():
    raise SystemExit(
        "b5_pinned runs only on a GPU: page-locked memory and DMA copies are the "
        "driver's, and the CPU backend does not model them"
    )

drv = driver()
n = 16 * 2**20  # float32 elements: 64 MiB
nbytes = 4 * n
d = drv.mem_alloc(nbytes)


def h2d_ms(host: np.ndarray) -> float:
    """One host-to-device copy, timed with CUDA events on the GPU's clock."""
    start, stop = drv.Event(), drv.Event()
    start.record()
    drv.memcpy_htod(d, host)
    stop.record()
    stop.synchronize()
    return stop.time_since(start)


t0 = time.perf_counter()
pageable = np.empty(n, np.float32)  # reserves address space; pages come on first use
t_pageable = (time.perf_counter() - t0) * 1e3
t0 = time.perf_counter()
pinned = drv.pagelocked_empty(n, np.float32)  # every page found and locked now
t_pinned = (time.perf_counter() - t0) * 1e3
pageable[:] = np.arange(n, dtype=np.float32)
pinned[:] = pageable

first = h2d_ms(pageable)  # the first copy this process makes
h2d_ms(pinned)  # and the first from page-locked memory: neither is counted below
pageable_ms = float(np.median([h2d_ms(pageable) for _ in range(10)]))
pinned_ms = float(np.median([h2d_ms(pinned) for _ in range(10)]))
back = np.empty(n, np.float32)
drv.memcpy_dtoh(back, d)

label = timing_label()  # "GPU": this program stops on the CPU backend
print(f"64 MiB host to device, {label} time, median of 10 copies:")
print(f"  pageable     {pageable_ms:7.3f} ms  {nbytes / pageable_ms / 1e6:6.1f} GB/s")
print(f"  page-locked  {pinned_ms:7.3f} ms  {nbytes / pinned_ms / 1e6:6.1f} GB/s")
print(f"page-locked is {pageable_ms / pinned_ms:.2f} times as fast")
print(f"first copy of the process (pageable): {first:.3f} ms")
print(f"allocating 64 MiB: np.empty {t_pageable:.3f} ms, ", end="")
print(f"pagelocked_empty {t_pinned:.3f} ms")
print(f"the device holds what was sent: {np.array_equal(back, pinned)}")
pinned.base.free()  # give the locked pages back to the OS now
