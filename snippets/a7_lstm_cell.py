"""out = a * x + y, every version checked against the exact result (A7)."""

# TODO(scaffold): print what the reader should see; keep the output the same on every
# run and on the CPU backend (no times, no addresses), then delete this comment.

import numpy as np

from thousand.kernels import rel_error
from thousand.kernels.lstm_cell import FAMILY, lstm_cell, lstm_cell_ref

n = 1_000_003  # a prime: no block size divides it, so the bounds checks matter
a = 2.5
rng = np.random.default_rng(0)
x = rng.standard_normal(n, dtype=np.float32)
y = rng.standard_normal(n, dtype=np.float32)
expected = lstm_cell_ref(x, y, a)  # float64

for v in FAMILY.versions:
    out = lstm_cell(x, y, a=a, version=v.number)  # NumPy in, NumPy out
    ok = rel_error(out, expected) <= FAMILY.tolerance
    print(f"v{v.number}: {n:,} elements, within {FAMILY.tolerance:g} of exact: {ok}")
