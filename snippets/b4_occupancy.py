"""Occupancy worked out by hand from one SM's limits, next to what the CUDA driver
predicts, for the copies of B4. GPU only: the limits and the calculator are the
driver's."""

import numpy as np

from thousand.cuda.occupancy import local_bytes, occupancy, registers, sm_limits
from thousand.kernels.occupancy import occupancy as copy_kernel

sm = sm_limits()  # read from the driver
slots = sm["threads"] // sm["warp_size"]
print(
    f"{sm['sm_count']} SMs, each holding at most {slots} warps, {sm['blocks']} "
    f"blocks, {sm['registers']:,} registers and {sm['shared'] // 1024} KiB of "
    f"shared memory ({sm['reserved_shared']} B of it reserved per block)"
)


def up(a, b):  # a rounded up to a multiple of b
    return -(-a // b) * b


def by_hand(regs, block, shared):
    """Blocks per SM that each resource allows, by the rules of the toolkit's
    occupancy calculator (cuda_occupancy.h) for compute capability 7.0 and up."""
    warps = -(-block // 32)
    per_warp = up(regs * 32, 256)  # registers go to whole warps, 256 at a time
    fits = per_warp * up(warps, 4) <= sm["registers_per_block"]  # 4 sub-partitions
    return {
        "warp slots": slots // warps,
        "blocks": sm["blocks"],
        "registers": 4 * (sm["registers"] // 4 // per_warp) // warps if fits else 0,
        "shared memory": sm["shared"] // up(shared + sm["reserved_shared"], 128),
    }


CASES = [  # family, kernel, threads per block, dynamic shared memory per block
    ("copy", "copy_v1", 256, 0),
    ("copy", "copy_v1", 32, 0),
    ("occupancy", "occupancy_v1", 256, 32 * 1024),
    ("occupancy", "occupancy_v2", 256, 0),
    ("occupancy", "occupancy_v3", 1024, 0),
]
for family, name, block, shared in CASES:
    regs = registers(family, name)
    limits = by_hand(regs, block, shared)
    per_block = -(-block // 32)
    warps = min(limits.values()) * per_block
    driver = occupancy(family, name, block, shared)
    print(f"{name}, {block} threads, {shared // 1024} KiB shared, {regs} registers")
    print("  blocks/SM allowed by " + ", ".join(f"{k}: {v}" for k, v in limits.items()))
    print(
        f"  by hand: {min(limits.values())} x {per_block} warps = {warps} warps, "
        f"{100 * warps / slots:.1f}%; driver: {driver['warps']} warps, "
        f"{100 * driver['fraction']:.1f}%"
    )

spilled = local_bytes("occupancy", "occupancy_v3")
print(f"occupancy_v3 keeps {spilled} bytes per thread in local memory (spilled)")
try:
    copy_kernel(np.ones(1024, np.float32), version=2, block=1024)
except RuntimeError as e:
    print("occupancy_v2 in 1024-thread blocks:", e)
