"""One sum seven ways, then max, float64 and an operator of your own (B7)."""

import numpy as np

from thousand.kernels.reduce import MAX, Operator, reduce, reduce_ref

n = 1_000_003  # prime: no block size divides it
rng = np.random.default_rng(0)
x = rng.random(n, dtype=np.float32)  # uniform in [0, 1): no cancellation
exact = reduce_ref(x)[0]  # float64
print(f"n = {n:,}, exact sum {exact:.4f}")
print(f"NumPy float32:  relative error {abs(np.sum(x) - exact) / exact:.1e}")
for v in range(1, 8):
    s = reduce(x, version=v)[0]
    print(f"v{v}:             relative error {abs(s - exact) / exact:.1e}")

# float64: the same kernels, compiled again with double in place of float.
x64 = rng.standard_normal(n)
s64 = reduce(x64)[0]
exact64 = reduce_ref(x64)[0]
print(f"float64 sum:    relative error {abs(s64 - exact64) / abs(exact64):.1e}")
m64 = reduce(x64, op=MAX)[0]
print(f"float64 max:    {m64:.6f}, equals NumPy exactly: {m64 == x64.max()}")

# Your own operator: a C expression of a and b, its identity, and NumPy's answer.
ABSMAX = Operator("absmax", "fmax(fabs(a), fabs(b))", 0.0, lambda v: np.abs(v).max())
y = rng.standard_normal(n, dtype=np.float32)
got = reduce(y, op=ABSMAX)[0]
print(f"absmax float32: {got:.6f}, equals NumPy exactly: {got == np.abs(y).max()}")
print(f"max of nothing: {reduce(np.empty(0, np.float32), op=MAX)[0]}")  # the identity

try:
    reduce(np.arange(10, dtype=np.int32))
except ValueError as e:
    print("int32 input:", e)
