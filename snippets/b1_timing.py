"""Launches are asynchronous; time kernels with CUDA events, not the host clock (B1)."""

import time

import numpy as np
import pycuda.autoprimaryctx  # noqa: F401  (makes the GPU's primary context current)
import pycuda.driver as drv
from pycuda import gpuarray

from thousand.cuda import median, time_ms
from thousand.kernels.vector_add import vector_add

n = 2**24
rng = np.random.default_rng(0)
x = rng.standard_normal(n, dtype=np.float32)
y = rng.standard_normal(n, dtype=np.float32)
dx, dy = gpuarray.to_gpu(x), gpuarray.to_gpu(y)
d_out = gpuarray.empty_like(dx)
vector_add(dx, dy, out=d_out)  # first launch compiles and loads the module
drv.Context.synchronize()

# The call returns as soon as the kernel is queued; the GPU finishes later.
t0 = time.perf_counter()
vector_add(dx, dy, out=d_out)
queued = time.perf_counter() - t0
drv.Context.synchronize()
done = time.perf_counter() - t0
print(
    f"call returned after {queued * 1e3:.3f} ms, kernel done after {done * 1e3:.3f} ms"
)

# Events are recorded on the GPU's own timeline, around the kernel alone.
gpu_ms = median(time_ms(lambda: vector_add(dx, dy, out=d_out), repeat=50))
out = np.empty_like(x)  # written in place, like the GPU's d_out
cpu = []
for _ in range(10):
    t0 = time.perf_counter()
    np.add(x, y, out=out)
    cpu.append((time.perf_counter() - t0) * 1e3)
cpu_ms = float(np.median(cpu))

moved = 3 * 4 * n  # bytes: read x and y, write out
print("n = 2^24 float32, median of 50 (GPU) and 10 (CPU) runs:")
print(f"  GPU kernel {gpu_ms:7.3f} ms  {moved / gpu_ms / 1e6:8,.0f} GB/s")
print(f"  NumPy      {cpu_ms:7.3f} ms  {moved / cpu_ms / 1e6:8,.0f} GB/s")
print(f"the kernel is {cpu_ms / gpu_ms:.0f}x faster, once the data is on the GPU")
