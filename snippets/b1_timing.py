"""Launches are asynchronous; time kernels with CUDA events, not the host clock (B1)."""

import time

import numpy as np

from thousand.cuda import (
    empty_like,
    median,
    synchronize,
    time_ms,
    timing_label,
    to_device,
)
from thousand.kernels.vector_add import vector_add

n = 2**24
rng = np.random.default_rng(0)
x = rng.standard_normal(n, dtype=np.float32)
y = rng.standard_normal(n, dtype=np.float32)
dx, dy = to_device(x), to_device(y)
d_out = empty_like(dx)
vector_add(dx, dy, out=d_out)  # first launch compiles and loads the module
synchronize()

# The call returns as soon as the kernel is queued; the GPU finishes later.
t0 = time.perf_counter()
vector_add(dx, dy, out=d_out)
queued = time.perf_counter() - t0
synchronize()
done = time.perf_counter() - t0
print(
    f"call returned after {queued * 1e3:.3f} ms, kernel done after {done * 1e3:.3f} ms"
)

# Events are recorded on the GPU's own timeline, around the kernel alone.
kernel_ms = median(time_ms(lambda: vector_add(dx, dy, out=d_out), repeat=50))
out = np.empty_like(x)  # written in place, like the kernel's d_out
cpu = []
for _ in range(10):
    t0 = time.perf_counter()
    np.add(x, y, out=out)
    cpu.append((time.perf_counter() - t0) * 1e3)
numpy_ms = float(np.median(cpu))

moved = 3 * 4 * n  # bytes: read x and y, write out
label = timing_label()  # "GPU", or "CPU emulation" where no GPU ran it
print(f"n = 2^24 float32, median of 50 ({label}) and 10 (NumPy) runs:")
print(f"  {label} kernel {kernel_ms:7.3f} ms  {moved / kernel_ms / 1e6:8,.0f} GB/s")
print(f"  NumPy      {numpy_ms:7.3f} ms  {moved / numpy_ms / 1e6:8,.0f} GB/s")
print(f"NumPy time / {label} kernel time: {numpy_ms / kernel_ms:.2f}")
