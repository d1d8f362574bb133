"""What one warp asks of memory, counted from its addresses, and the kernels that
make those requests checked against NumPy (B6)."""

import numpy as np

from thousand.kernels.stencil import stencil, stencil_ref
from thousand.kernels.strided import strided
from thousand.kernels.transpose import transpose

lane = np.arange(32)  # the 32 threads of one warp
rng = np.random.default_rng(0)

# Global memory moves 32-byte sectors; lane l of strided_v1 loads x[l * stride].
x = rng.standard_normal(32 * 64, dtype=np.float32)
print("stride  sectors  bytes moved  useful  strided == x[::stride]")
for stride in (1, 2, 4, 8, 32):
    sectors = len(np.unique(lane * stride * 4 // 32))
    useful = 128 / (sectors * 32)  # 32 lanes x 4 bytes
    ok = np.array_equal(strided(x, stride=stride, n=32), x[::stride][:32])
    print(f"{stride:>6}{sectors:>9}{sectors * 32:>13}{useful:>8.1%}  {ok}")

# Shared memory has 32 banks of 4 bytes: word w is in bank w % 32. Reading a column
# of a tile, lane l reads word l * width + c.
for width in (32, 33):
    banks = len(np.unique(lane * width % 32))
    print(f"tile[32][{width}], one column: {banks:>2} banks, {32 // banks:>2} pass(es)")
a = rng.standard_normal((100, 257), dtype=np.float32)
for v in (2, 3):
    print(f"transpose v{v} == a.T: {np.array_equal(transpose(a, version=v), a.T)}")

# Constant memory serves one address at a time: in v2 every lane reads tap s at
# step s; in v4 lane l reads tap (s + l) % 9.
y = rng.standard_normal(1000, dtype=np.float32)
taps = np.hanning(9).astype(np.float32)
for v, tap in ((2, lambda s: np.full(32, s)), (4, lambda s: (s + lane) % 9)):
    most = max(len(np.unique(tap(s))) for s in range(9))
    err = np.abs(stencil(y, taps, version=v) - stencil_ref(y, taps)).max()
    print(f"stencil v{v}: {most} different taps per warp read, matches: {err < 1e-5}")
