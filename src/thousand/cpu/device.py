"""What the CPU backend reports as its 'device': CUDA's limits, the machine's size."""

from __future__ import annotations

import os
import platform
from pathlib import Path

from .engine import MAX_BLOCK_DIM, MAX_GRID_DIM, MAX_THREADS_PER_BLOCK, workers


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cache_bytes(level: int) -> int:
    """The size of the CPU's cache at `level`, from sysfs (0 where unknown)."""
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(base.glob("index*")):
        try:
            if int((index / "level").read_text()) != level:
                continue
            text = (index / "size").read_text().strip()
        except (OSError, ValueError):
            continue
        units = {"K": 1024, "M": 1024**2}
        return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)
    return 0


def device_info() -> dict:
    """The same keys as the GPU's device_info(); limits are CUDA's, sizes the CPU's."""
    n = workers()
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return {
        "name": f"CPU emulation on {n} core(s): {_cpu_model()}",
        "compute_capability": "emulated",
        "sm_count": n,  # one worker thread plays one SM
        "warp_size": 32,
        "max_threads_per_block": MAX_THREADS_PER_BLOCK,
        "max_block_dim": list(MAX_BLOCK_DIM),
        "max_grid_dim": list(MAX_GRID_DIM),
        "max_threads_per_sm": 2048,
        "shared_memory_per_block": 48 * 1024,
        "registers_per_block": 65536,
        "l2_cache_bytes": _cache_bytes(2),
        "total_memory_bytes": memory,
        "peak_bandwidth_gbps": None,
        "backend": "cpu",
    }
