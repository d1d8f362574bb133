"""Matrix add on a 2-D grid: which block covers which part of the matrix (B1)."""

import numpy as np

from thousand.cuda import cdiv
from thousand.kernels.matrix_add import matrix_add

M, N = 1000, 1500  # (rows, columns)
block = (32, 8)  # 32 threads along a row, 8 rows: 256 threads per block
grid = (cdiv(N, block[0]), cdiv(M, block[1]))
print(
    f"matrix {M} x {N}, block {block}, grid {grid}: "
    f"{grid[0] * grid[1]:,} blocks, {grid[0] * grid[1] * 256:,} threads "
    f"for {M * N:,} elements"
)

rng = np.random.default_rng(0)
a = rng.standard_normal((M, N), dtype=np.float32)
b = rng.standard_normal((M, N), dtype=np.float32)
c = matrix_add(a, b, block=block)
print(f"identical to NumPy: {np.array_equal(c, a + b)}")
