"""Time a kernel with CUDA events and compare with NumPy on the CPU (B1)."""

import time

import numpy as np
from pycuda import gpuarray

from thousand.cuda import median, time_ms
from thousand.kernels.vector_add import vector_add

n = 2**24
rng = np.random.default_rng(0)
x = rng.standard_normal(n, dtype=np.float32)
y = rng.standard_normal(n, dtype=np.float32)
dx, dy = gpuarray.to_gpu(x), gpuarray.to_gpu(y)
d_out = gpuarray.empty_like(dx)

# Launches return at once; events recorded on the GPU's own timeline measure the kernel.
gpu_ms = median(time_ms(lambda: vector_add(dx, dy, out=d_out), repeat=50))

cpu = []
for _ in range(10):
    t0 = time.perf_counter()
    np.add(x, y)
    cpu.append((time.perf_counter() - t0) * 1e3)
cpu_ms = float(np.median(cpu))

moved = 3 * 4 * n  # bytes: read x and y, write out
print(
    f"n = 2^24 float32: GPU kernel {gpu_ms:.3f} ms ({moved / gpu_ms / 1e6:,.0f} GB/s), "
    f"NumPy {cpu_ms:.2f} ms ({moved / cpu_ms / 1e6:,.0f} GB/s)"
)
print(f"the kernel is {cpu_ms / gpu_ms:.0f}x faster, once the data is on the GPU")
