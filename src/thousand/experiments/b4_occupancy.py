"""B4: the occupancy the CUDA driver predicts, over the block size, for four copies
that differ in what limits them: copy_v1 (only the SM's thread and block limits),
occupancy_v1 with 32 KiB of shared memory per block, occupancy_v2 (64 floats per
thread in registers) and occupancy_v3 (v2 squeezed into 64 registers).

Occupancy is resident warps per SM over the SM's warp slots, from the driver's
calculator (cuOccupancyMaxActiveBlocksPerMultiprocessor, see thousand.cuda.occupancy)
for the cubin that actually runs. A block larger than a kernel's registers allow
cannot be launched at all: no point there. b4-block-size measures the same kernels
at the same block sizes.
"""

from __future__ import annotations

from thousand.experiments import Experiment, Note

BLOCKS = [32, 64, 96, 128, 192, 256, 384, 512, 640, 768, 896, 1024]
FOOTPRINT = 32 * 1024  # occupancy_v1's shared memory per block, in bytes

COPY = "copy_v1"
SHARED = "occupancy_v1, 32 KiB shared/block"
REGISTERS = "occupancy_v2, 64 floats/thread"
SPILLED = "occupancy_v3, 64 registers, spills"
# series: (family, kernel, dynamic shared memory per block)
KERNELS = {
    COPY: ("copy", "copy_v1", 0),
    SHARED: ("occupancy", "occupancy_v1", FOOTPRINT),
    REGISTERS: ("occupancy", "occupancy_v2", 0),
    SPILLED: ("occupancy", "occupancy_v3", 0),
}


def run(quick: bool) -> dict:
    from thousand.cuda.occupancy import (
        local_bytes,
        max_threads_per_block,
        occupancy,
        registers,
    )

    series = {}
    for label, (family, name, shared) in KERNELS.items():
        largest = max_threads_per_block(family, name)
        series[label] = [
            100 * occupancy(family, name, b, shared)["fraction"]
            if b <= largest
            else None
            for b in BLOCKS
        ]
    return {
        "kind": "lines",
        "x": {"label": "threads per block", "values": BLOCKS, "log": True},
        "y": {"label": "predicted occupancy (%)", "format": "{:,.1f}"},
        "series": series,
        "notes": {
            "regs_copy": float(registers("copy", "copy_v1")),
            "regs_v2": float(registers("occupancy", "occupancy_v2")),
            "largest_v2": float(max_threads_per_block("occupancy", "occupancy_v2")),
            "regs_v3": float(registers("occupancy", "occupancy_v3")),
            "spill_v3": float(local_bytes("occupancy", "occupancy_v3")),
        },
    }


EXPERIMENT = Experiment(
    name="b4-occupancy",
    title={
        "zh": "驱动预测的占用率随线程块大小的变化：四个受不同资源限制的复制核函数",
        "en": "Predicted occupancy over block size: four copies, four different limits",
    },
    run=run,
    families=("copy", "occupancy"),
    gpu_only="the occupancy calculator is the CUDA driver's",
    notes={
        "regs_copy": Note(
            "copy_v1 每个线程用的寄存器数", "registers per thread, copy_v1", "{:,.0f}"
        ),
        "regs_v2": Note(
            "occupancy_v2 每个线程用的寄存器数",
            "registers per thread, occupancy_v2",
            "{:,.0f}",
        ),
        "largest_v2": Note(
            "occupancy_v2 能启动的最大线程块（线程数）",
            "largest block occupancy_v2 can launch (threads)",
            "{:,.0f}",
        ),
        "regs_v3": Note(
            "occupancy_v3 每个线程用的寄存器数",
            "registers per thread, occupancy_v3",
            "{:,.0f}",
        ),
        "spill_v3": Note(
            "occupancy_v3 每个线程的局部内存（溢出的寄存器），字节",
            "local memory per thread of occupancy_v3 (spilled registers), bytes",
            "{:,.0f}",
        ),
    },
    zh={
        "threads per block": "每个线程块的线程数",
        "predicted occupancy (%)": "预测占用率 (%)",
        COPY: "copy_v1",
        SHARED: "occupancy_v1，每块 32 KiB 共享内存",
        REGISTERS: "occupancy_v2，每线程 64 个 float",
        SPILLED: "occupancy_v3，64 个寄存器，有溢出",
    },
)
