"""Five ways to get the thread hierarchy wrong, and what each one does (B3)."""

from pathlib import Path

import numpy as np

from thousand.cuda import cdiv, launch, to_device
from thousand.kernels.coordinates import coordinates

BUGS = Path(__file__).with_suffix(".cu")  # snippets/b3_pitfalls.cu
H, W = 5, 10  # rows, columns

# 1. x and y swapped in the kernel, the grid sized the usual way (x: columns).
out = to_device(np.zeros((H, W), np.int32))
grid = (cdiv(W, 4), cdiv(H, 2))
launch(BUGS, "swapped_xy", grid, (4, 2), out, np.int32(H), np.int32(W))
written = out.get()
print(f"1. x and y swapped: {written.sum()} of {H * W} elements written (# yes, . no)")
for row in written:
    print("   " + "".join("#" if v else "." for v in row))

# 2. No bounds check: n = 10 in blocks of 4 is 3 blocks, 12 threads. The buffer has
#    6 more ints after the array, standing in for whatever lives there.
n = 10
buf = to_device(np.full(n + 6, -1, np.int32))
launch(BUGS, "no_bounds_check", (cdiv(n, 4),), (4,), buf, np.int32(n))
print(f"2. no bounds check: the array {buf.get()[:n].tolist()}")
print(f"   and after its end        {buf.get()[n:].tolist()}")

# 3. int overflow: the index thread 0 of block b computes, in blocks of 256 threads.
blocks = np.array([8_388_607, 8_388_608, 16_777_215, 16_777_216], np.uint32)
as_int, as_64 = (to_device(np.zeros(len(blocks), np.int64)) for _ in range(2))
args = (np.uint32(256), np.uint32(0), as_int, as_64, np.int32(len(blocks)))
launch(BUGS, "flat_index", (1,), (32,), to_device(blocks), *args)
print("3. blockIdx.x * 256 + 0 as int, and widened to 64 bits first:")
for b, i, j in zip(blocks, as_int.get(), as_64.get(), strict=True):
    print(f"   block {b:>10,}: int {i:>14,}   64-bit {j:>14,}")

# 4. gridDim.y and gridDim.z stop at 65,535; gridDim.x does not.
a = np.zeros((1, 600_000, 1), np.float32)  # 600,000 rows, one column
try:
    coordinates(a, version=2, block=(1, 8))  # 75,000 blocks along y
except ValueError as e:
    print("4.", e)
d_out = to_device(np.zeros((6, 1, 4, 12), np.int32))
try:  # past our launcher: the driver refuses it itself
    launch("coordinates", "coordinates_v2", (1, 65_536), (12, 1), d_out,
           np.int32(4), np.int32(12))  # fmt: skip
except RuntimeError as e:
    print("  ", e)
done = coordinates(a, version=1, block=(8,))  # the same rows along x: 75,000 blocks
print(f"   v1 over the same array: {done.shape[2]:,} rows, last in block "
      f"{done[0, 0, -1, 0]:,}")  # fmt: skip

# 5. More than 1024 threads in a block, even when each dimension is within bounds.
try:
    coordinates(np.zeros((1, 4, 12), np.float32), version=2, block=(1024, 2))
except ValueError as e:
    print("5.", e)
try:
    launch("coordinates", "coordinates_v2", (1, 2), (1024, 2), d_out,
           np.int32(4), np.int32(12))  # fmt: skip
except RuntimeError as e:
    print("  ", e)
after = coordinates(np.zeros((1, 1, 3), np.float32))[3].ravel().tolist()
print(f"   the context still works: threadIdx.x of a 3-thread launch {after}")
