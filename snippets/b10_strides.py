"""Shape, strides and contiguity: what a view is, and what a kernel needs (B10)."""

import numpy as np

from thousand.kernels.row_sum import row_sum

a = np.arange(12, dtype=np.float32).reshape(3, 4)  # 3 rows, 4 columns, row-major


def describe(name, x):
    layout = "C" if x.flags.c_contiguous else "F" if x.flags.f_contiguous else "-"
    memory = "a's memory" if np.shares_memory(x, a) else "new memory"
    print(
        f"{name:<26}shape {x.shape!s:<8} strides {x.strides!s:<9}"
        f"contiguous {layout}  {memory}"
    )


describe("a", a)
describe("a.T", a.T)
describe("a[:, ::2]", a[:, ::2])
describe("np.ascontiguousarray(a.T)", np.ascontiguousarray(a.T))
describe("np.asfortranarray(a)", np.asfortranarray(a))

# Element (i, j) lives at byte offset i * strides[0] + j * strides[1] from the start.
i, j = 2, 1
offset = i * a.strides[0] + j * a.strides[1]
print(f"a[{i}, {j}] is {offset} bytes in: element {offset // 4}, value {a[i, j]}")
offset_t = j * a.T.strides[0] + i * a.T.strides[1]
print(f"a.T[{j}, {i}] is {offset_t} bytes in: the same float, {a.T[j, i]}")
print("a.T shares a's memory:", np.shares_memory(a, a.T))
print("a copy does not:", np.shares_memory(a, np.ascontiguousarray(a.T)))

# The kernels take C-contiguous arrays only; a strided view is refused, not copied.
print("row_sum(a)        ", row_sum(a))
try:
    row_sum(a.T)
except ValueError as e:
    print("row_sum(a.T)       ValueError:", e)
print("row_sum(contig a.T)", row_sum(np.ascontiguousarray(a.T)), "(a's column sums)")
f = np.asfortranarray(a)  # the same matrix, stored column by column
print("row_sum(F order, v2)", row_sum(f, version=2), "(read column-major, no copy)")
