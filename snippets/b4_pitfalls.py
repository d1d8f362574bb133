"""Two execution-model mistakes, run where they cannot hide: on the CPU backend,
which never runs a warp in lock step and checks every barrier (B4)."""

from pathlib import Path

import numpy as np

from thousand.cuda import KernelFault, launch, to_device, use_backend

use_backend("cpu")  # on a GPU these kernels may well print the right answer
KERNELS = Path(__file__).with_suffix(".cu")  # snippets/b4_pitfalls.cu
ones = np.ones(64, np.float32)

# 1. __syncthreads() inside a branch that splits every warp.
try:
    launch(KERNELS, "half_warp_barrier", (1,), (64,), to_device(ones), to_device(ones))
except KernelFault as e:
    print("1.", e)

# 2. Lanes of one warp sharing data without __syncwarp().
for name in ("warp_total_unsynced", "warp_total"):
    out = to_device(np.zeros(1, np.float32))
    launch(KERNELS, name, (1,), (32,), to_device(ones[:32]), out)
    print(f"2. {name}: the sum of 32 ones is {out.get()[0]:g}")
