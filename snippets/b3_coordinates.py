"""Which block and which thread get each element: a 2-D launch, then all three (B3)."""

import numpy as np

from thousand.cuda import cdiv
from thousand.kernels.coordinates import coordinates

H, W = 5, 10  # rows, columns
block = (4, 2)  # (x, y): 4 threads along a row, 2 rows: 8 threads per block
grid = (cdiv(W, block[0]), cdiv(H, block[1]))  # x covers the columns, y the rows
threads = grid[0] * grid[1] * block[0] * block[1]
print(f"{H} x {W} array, block {block}, grid {grid}: {threads} threads, {H * W} used")

a = np.zeros((1, H, W), np.float32)  # (depth, height, width): one layer
bx, by, bz, tx, ty, tz = coordinates(a, version=2, block=block)[:, 0]
for title, x, y in (("blockIdx", bx, by), ("threadIdx", tx, ty)):
    print(f"\n{title} (x,y) of each element, row by row:")
    for r in range(H):
        print("  " + " ".join(f"{x[r, c]},{y[r, c]}" for c in range(W)))
zs = np.unique(np.concatenate([bz.ravel(), tz.ravel()])).tolist()
print(f"\nblockIdx.z and threadIdx.z take the values {zs}: a 2-D launch")

# One element of a (2, 3, 4) array under each version: who owns element [1, 2, 3]?
a = np.zeros((2, 3, 4), np.float32)
z, y, x = 1, 2, 3
print(f"\nelement [z, y, x] = [{z}, {y}, {x}] of a {a.shape} array, flat index "
      f"(z * 3 + y) * 4 + x = {(z * 3 + y) * 4 + x}")  # fmt: skip
for version, blk in ((1, (8,)), (2, (4, 2)), (3, (2, 2, 2))):
    rec = coordinates(a, version=version, block=blk)[:, z, y, x].tolist()
    print(f"  v{version}, block {blk}: blockIdx {rec[:3]}, threadIdx {rec[3:]}")
