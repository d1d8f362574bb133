"""A block of 80 threads as the hardware sees it: warps of 32 lanes, and which
lanes take a branch, from __ballot_sync (B4)."""

from pathlib import Path

import numpy as np

from thousand.cuda import launch, to_device

KERNELS = Path(__file__).with_suffix(".cu")  # snippets/b4_warps.cu
BLOCK = 80  # not a multiple of 32: the last warp is partly empty
CONDITIONS = ["threadIdx.x % 3 == 0", "threadIdx.x < 64", "threadIdx.x < 48"]

warps = -(-BLOCK // 32)
out = to_device(np.zeros(4 * warps, np.uint32))
launch(KERNELS, "branch_ballots", (1,), (BLOCK,), out)
masks = out.get().reshape(warps, 4)


def lanes(mask, here):
    """Lane 0 first: '#' for a set bit, '.' for a clear one, ' ' for no lane."""
    return "".join(
        " " if not here >> k & 1 else "#" if mask >> k & 1 else "." for k in range(32)
    )


print(f"a block of {BLOCK} threads is {warps} warps")
for w in range(warps):
    here = masks[w, 0]
    n = bin(here).count("1")
    first = 32 * w
    print(f"warp {w}: threads {first}-{first + n - 1}, {n} lanes [{lanes(here, here)}]")
for k, condition in enumerate(CONDITIONS, start=1):
    print(f"if ({condition})")
    for w in range(warps):
        here, taken = masks[w, 0], masks[w, k]
        if taken in (0, here):
            verdict = "one side only"
        else:
            verdict = "diverges: both sides, one after the other"
        print(f"  warp {w} [{lanes(taken, here)}] {verdict}")
