"""B4: bandwidth over the block size, for the four copies whose predicted occupancy
b4-occupancy draws: copy_v1, occupancy_v1 with 32 KiB of shared memory per block,
occupancy_v2 (64 floats per thread) and occupancy_v3 (the same, spilled).

A copy moves 8 bytes per element (read 4, write 4); GB/s is 8n over the median
time. A block size a kernel cannot launch with (too many registers) has no point.
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import empty, median, on_cpu, time_ms, to_device
from thousand.experiments import Experiment, Note
from thousand.kernels.copy import copy
from thousand.kernels.occupancy import occupancy

BLOCKS = [32, 64, 96, 128, 192, 256, 384, 512, 640, 768, 896, 1024]
FOOTPRINT = 32 * 1024  # as in b4-occupancy

COPY = "copy_v1"
SHARED = "occupancy_v1, 32 KiB shared/block"
REGISTERS = "occupancy_v2, 64 floats/thread"
SPILLED = "occupancy_v3, 64 registers, spills"
# series: (family, kernel, launch(x, out, block))
KERNELS = {
    COPY: ("copy", "copy_v1", lambda x, o, b: copy(x, out=o, version=1, block=b)),
    SHARED: (
        "occupancy",
        "occupancy_v1",
        lambda x, o, b: occupancy(x, out=o, version=1, block=b, shared=FOOTPRINT),
    ),
    REGISTERS: (
        "occupancy",
        "occupancy_v2",
        lambda x, o, b: occupancy(x, out=o, version=2, block=b),
    ),
    SPILLED: (
        "occupancy",
        "occupancy_v3",
        lambda x, o, b: occupancy(x, out=o, version=3, block=b),
    ),
}


def largest_block(family: str, name: str) -> int:
    """1024 threads, or fewer where the kernel's registers do not allow that many."""
    if on_cpu():  # CPU threads have no register file to run out of
        return 1024
    from thousand.cuda.occupancy import max_threads_per_block

    return max_threads_per_block(family, name)


def run(quick: bool) -> dict:
    n = 2**14 if quick else 2**28  # full: 1 GiB each way, as copy's own benchmark
    x = np.random.default_rng(0).random(n, dtype=np.float32)  # any data will do
    dx, d_out = to_device(x), empty(n)
    series = {}
    for label, (family, name, launch) in KERNELS.items():
        largest = largest_block(family, name)
        series[label] = []
        for b in BLOCKS:
            if b > largest:
                series[label].append(None)
                continue
            samples = time_ms(
                lambda b=b, launch=launch: launch(dx, d_out, b),
                warmup=1 if quick else 3,
                repeat=2 if quick else 15,
            )
            series[label].append(8 * n / median(samples) / 1e6)
    copies = series[COPY]
    best = max(range(len(BLOCKS)), key=lambda i: copies[i])
    return {
        "kind": "lines",
        "x": {"label": "threads per block", "values": BLOCKS, "log": True},
        "y": {"label": "bandwidth (GB/s)", "format": "{:,.0f}"},
        "series": series,
        "notes": {
            "best_block": float(BLOCKS[best]),
            "best_gbps": copies[best],
            "at_32": 100 * copies[0] / copies[best],
            "registers_over_copy": max(v for v in series[REGISTERS] if v is not None)
            / copies[best],
        },
    }


EXPERIMENT = Experiment(
    name="b4-block-size",
    title={
        "zh": "带宽随线程块大小的变化：同样四个复制核函数",
        "en": "Bandwidth over block size: the same four copies",
    },
    run=run,
    families=("copy", "occupancy"),
    notes={
        "best_block": Note(
            "copy_v1 带宽最高时的线程块大小",
            "block size at which copy_v1 is fastest",
            "{:,.0f}",
        ),
        "best_gbps": Note(
            "copy_v1 在该线程块大小下的带宽 (GB/s)",
            "copy_v1's bandwidth there (GB/s)",
            "{:,.0f}",
        ),
        "at_32": Note(
            "copy_v1 在 32 线程的线程块下只有最高带宽的百分之几",
            "copy_v1 with 32-thread blocks, % of its best",
            "{:,.0f}%",
        ),
        "registers_over_copy": Note(
            "occupancy_v2 的最高带宽是 copy_v1 最高带宽的多少倍",
            "occupancy_v2's best bandwidth over copy_v1's best",
            "{:,.2f}×",
        ),
    },
    zh={
        "threads per block": "每个线程块的线程数",
        "bandwidth (GB/s)": "带宽 (GB/s)",
        COPY: "copy_v1",
        SHARED: "occupancy_v1，每块 32 KiB 共享内存",
        REGISTERS: "occupancy_v2，每线程 64 个 float",
        SPILLED: "occupancy_v3，64 个寄存器，有溢出",
    },
)
