"""The package's CUDA C on the CPU: same results, and bugs caught by name (B17)."""

from pathlib import Path

import numpy as np

from thousand import cpu
from thousand.cpu import pictures
from thousand.cuda import KernelFault, launch, to_device, use_backend
from thousand.kernels.reduce import reduce, reduce_ref
from thousand.kernels.vector_add import vector_add, vector_add_ref

use_backend("cpu")  # the default, THOUSAND_BACKEND=auto, picks it where no GPU is
BUGS = Path(__file__).with_suffix(".cu")  # snippets/b17_cpu_backend.cu
rng = np.random.default_rng(0)
n = 1_000_003
x = rng.standard_normal(n, dtype=np.float32)
y = rng.standard_normal(n, dtype=np.float32)

# 1. The same kernels, the same answers as on a GPU.
same = np.array_equal(vector_add(x, y, version=4), vector_add_ref(x, y))
print(f"1. vector_add v4, {n:,} elements, identical to NumPy: {same}")
exact = reduce_ref(x)[0]
err = abs(reduce(x, version=7)[0] - exact) / abs(exact)  # float32 sums, any order
print(f"   reduce v7: relative error vs the exact sum {err:.1e}")

# 2. An index past the end: the checked build names the buffer, block and thread.
with cpu.checked_mode():
    dx, d_out = to_device(x), to_device(np.empty_like(x))
    try:
        launch(
            "vector_add",
            "vector_add_v2",
            (3907,),
            (256,),
            dx,
            dx,
            d_out,
            np.int32(n + 1),
        )  # one too many
    except KernelFault as e:
        print("2.", e)

# 3. A barrier that some threads never reach: an error, not a hang.
try:
    launch(
        BUGS,
        "block_sum_early_exit",
        (2,),
        (256,),
        to_device(x[:300]),
        to_device(np.zeros(2, np.float32)),
        np.int32(300),
    )
except KernelFault as e:
    print("3.", e)

# 4. Lock-step assumed, not enforced: the emulator runs lanes one after another.
for kernel in ("warp_sum_lockstep", "warp_sum_syncwarp"):
    s = to_device(np.ones(64, np.float32))
    launch(BUGS, kernel, (1,), (32,), s)
    print(f"4. {kernel}: sum of 64 ones = {s.get()[0]:g}")

# 5. Which shared-memory banks one warp hits, from the addresses it used.
for panel in pictures.PICTURES["transpose-banks"]:
    p = pictures.warp_access(panel, pictures.trace(panel))
    print(f"5. {p['kernel']}: {len(set(p['banks']))} banks, {p['conflict']}-way")
