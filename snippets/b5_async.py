"""An async copy is async only from page-locked memory; sync before you read (B5).

GPU only: streams and page-locked memory belong to the driver and the hardware,
which the CPU backend does not model.
"""

import time

import numpy as np

from thousand.cuda import cdiv, driver, launch, on_cpu, timing_label
from thousand.kernels.sigmoid import sigmoid_ref

if on_cpu():
    raise SystemExit(
        "b5_async runs only on a GPU: streams and page-locked memory are the "
        "driver's, and the CPU backend does not model them"
    )

drv = driver()
n = 16 * 2**20  # float32 elements: 64 MiB
x = np.random.default_rng(0).standard_normal(n, dtype=np.float32)  # pageable
x_pinned = drv.pagelocked_empty(n, np.float32)
x_pinned[:] = x
d_x, d_y = drv.mem_alloc(4 * n), drv.mem_alloc(4 * n)
stream = drv.Stream()


def host_ms(host: np.ndarray) -> tuple[float, float]:
    """Host clock: until memcpy_htod_async returns, and until the copy is done."""
    drv.Context.synchronize()
    t0 = time.perf_counter()
    drv.memcpy_htod_async(d_x, host, stream)
    returned = time.perf_counter() - t0
    stream.synchronize()
    return returned * 1e3, (time.perf_counter() - t0) * 1e3


for host in (x, x_pinned):  # warm-up: the first call of each kind sets things up
    host_ms(host)
print(f"memcpy_htod_async, 64 MiB, host clock ({timing_label()}):")
for name, host in (("pageable", x), ("page-locked", x_pinned)):
    returned, done = host_ms(host)
    print(f"  {name:<11}  call returned {returned:7.3f} ms, copy done {done:7.3f} ms")

# d_x holds x. Queue sigmoid and the copy back, then read the result too early.
y = drv.pagelocked_zeros(n, np.float32)
args = np.uintp(int(d_x)), np.uintp(int(d_y)), np.int32(n)
launch("sigmoid", "sigmoid_v1", (cdiv(n, 256),), (256,), *args, stream=stream)
drv.memcpy_dtoh_async(y, d_y, stream)
early = y[-1]  # the copy has been queued, not done
stream.synchronize()
print(f"y[-1] read before stream.synchronize(): {early:.6f}")
print(f"y[-1] read after stream.synchronize():  {y[-1]:.6f}")
error = np.abs(y - sigmoid_ref(x)).max()
print(f"all of y matches NumPy after synchronize: {error < 1e-6}")
x_pinned.base.free()
y.base.free()
