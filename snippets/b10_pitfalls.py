"""Four ways to get layout wrong, each caught in the act (B10)."""

import numpy as np

from thousand.kernels.row_sum import row_sum

a = np.arange(12, dtype=np.float32).reshape(3, 4)

# --8<-- [start:stride-blind]
# 1. Code that hands a kernel a pointer and a shape, but no strides. a.T starts at
#    a's address, so the kernel reads a's bytes, in a's order, as if row-major.
at = a.T  # (4, 3); wanted: the sums of its rows, which are a's column sums
print("a.T starts where a starts:", at.ctypes.data == a.ctypes.data)
seen = at.ravel(order="K").reshape(at.shape)  # the bytes as they lie in memory
print("a stride-blind kernel sums:", row_sum(seen))
print("the rows of a.T sum to:    ", at.sum(axis=1))
# --8<-- [end:stride-blind]

# --8<-- [start:hidden-copy]
# 2. np.ascontiguousarray copies only when it must: nothing for a, everything for
#    a.T. In a hot loop the call looks free and is a full copy every time.
for name, x in (("a", a), ("a.T", a.T)):
    c = np.ascontiguousarray(x)
    print(f"np.ascontiguousarray({name}): {0 if c is x else c.nbytes} bytes copied")
w = np.ones((256, 64), dtype=np.float32)
copied = 0
for _ in range(100):  # the hot loop
    w_t = np.ascontiguousarray(w.T)
    copied += 0 if np.shares_memory(w_t, w) else w_t.nbytes
    sums = row_sum(w_t)
print(f"100 steps: {copied:,} bytes copied, {copied // w.nbytes} copies of w")
# --8<-- [end:hidden-copy]

# --8<-- [start:element-loop]
# 3. Indexing a NumPy array from Python makes a new boxed scalar for every element.
x = np.ones(4, dtype=np.float32)
print(f"x[0] is a {type(x[0]).__name__}; a new object each time: {x[0] is not x[0]}")
# --8<-- [end:element-loop]

# --8<-- [start:wrong-axis]
# 4. A square matrix hides a wrong axis: every answer has the right shape.
m = np.arange(9, dtype=np.float32).reshape(3, 3)
mt = m.T  # m, transposed somewhere upstream
print("row sums of m:  ", m.sum(axis=1))
print("mt.sum(axis=1): ", mt.sum(axis=1), "(the column sums of m)")
print("mt.sum(axis=0): ", mt.sum(axis=0), "(the row sums of m, as wanted)")
# --8<-- [end:wrong-axis]
