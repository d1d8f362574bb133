"""B6: registers per thread of the package's kernels, as ptxas allocates them, and
how many warps an SM can hold at that count.

The figures come from the compiler, not from a run: nvcc compiles each family's .cu
file for sm_90 (Hopper) with the flags the runtime uses and `-Xptxas -v`, which
reports each kernel's registers, shared memory and spills. No GPU is needed, so the
CPU layer computes the same table (for the same nvcc).

An SM has 65,536 32-bit registers and holds at most 64 warps. ptxas gives each warp
its registers in units of 256 (8 per thread), so a kernel using r registers per
thread leaves room for floor(65,536 / (32 * ceil(r / 8) * 8)) warps, at most 64.
"""

from __future__ import annotations

import math
import re
import subprocess
import tempfile
from pathlib import Path

from thousand.cuda import nvcc_path
from thousand.cuda.compiler import KERNEL_DIR, NVCC_FLAGS
from thousand.experiments import Experiment, Note

ARCH = "sm_90"
FAMILIES = ("transpose", "stencil", "matmul")
REGISTERS_PER_SM = 65536
MAX_WARPS_PER_SM = 64
ENTRY = re.compile(r"Compiling entry function '(\w+)' for '\w+'")
USED = re.compile(r"Used (\d+) registers")
SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def usage(family: str) -> dict[str, dict]:
    """{kernel: {"registers": r, "spill_bytes": b}} from ptxas's report."""
    cu = KERNEL_DIR / f"{family}.cu"
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [nvcc_path(), *NVCC_FLAGS, "-cubin", f"-arch={ARCH}", "-Xptxas", "-v"]
        cmd += ["-I", str(KERNEL_DIR), str(cu), "-o", str(Path(tmp) / "k.cubin")]
        done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"nvcc failed on {cu.name}:\n{done.stderr}")
    found, kernel = {}, None
    for line in (done.stderr + done.stdout).splitlines():
        if m := ENTRY.search(line):
            kernel = m.group(1)
            found[kernel] = {"registers": None, "spill_bytes": 0}
        elif kernel and (m := SPILLS.search(line)):
            found[kernel]["spill_bytes"] = int(m.group(1)) + int(m.group(2))
        elif kernel and (m := USED.search(line)):
            found[kernel]["registers"] = int(m.group(1))
    if not found or any(k["registers"] is None for k in found.values()):
        raise RuntimeError(
            f"could not read ptxas's report for {cu.name}:\n{done.stderr}"
        )
    return found


def warps_allowed(registers: int) -> int:
    per_warp = 32 * math.ceil(registers / 8) * 8
    return min(MAX_WARPS_PER_SM, REGISTERS_PER_SM // per_warp)


def run(quick: bool) -> dict:  # the same work either way: it only compiles
    found = {family: usage(family) for family in FAMILIES}
    every = {k: u for kernels in found.values() for k, u in kernels.items()}
    versions = sorted({int(k.rsplit("_v", 1)[1]) for k in every})
    top = max(every, key=lambda k: every[k]["registers"])
    return {
        "kind": "bars",
        "x": {"label": "version", "values": [f"v{v}" for v in versions]},
        "y": {"label": "registers per thread", "format": "{:,.0f}"},
        "series": {
            family: [
                kernels.get(f"{family}_v{v}", {}).get("registers") for v in versions
            ]
            for family, kernels in found.items()
        },
        "notes": {
            "most": every[top]["registers"],
            "most_warps": warps_allowed(every[top]["registers"]),
            "stencil_v1": every["stencil_v1"]["registers"],
            "stencil_v2": every["stencil_v2"]["registers"],
            "spills": sum(k["spill_bytes"] for k in every.values()),
        },
    }


EXPERIMENT = Experiment(
    name="b6-registers",
    title={
        "zh": "每个核函数每线程用的寄存器数（ptxas，sm_90）",
        "en": "Registers per thread of each kernel (ptxas, sm_90)",
    },
    run=run,
    families=FAMILIES,
    notes={
        "most": Note(
            "寄存器用得最多的核函数，每线程",
            "most registers of any kernel here, per thread",
            "{:,.0f}",
        ),
        "most_warps": Note(
            "它让每个 SM 最多驻留的线程束数（上限 64）",
            "warps per SM that leaves room for (of 64)",
            "{:,.0f}",
        ),
        "stencil_v1": Note(
            "stencil v1（系数在全局内存）每线程寄存器",
            "stencil v1 (taps in global memory), registers per thread",
            "{:,.0f}",
        ),
        "stencil_v2": Note(
            "stencil v2（系数在常量内存）每线程寄存器",
            "stencil v2 (taps in constant memory), registers per thread",
            "{:,.0f}",
        ),
        "spills": Note(
            "所有核函数溢出到本地内存的字节数（存 + 取）",
            "bytes spilled to local memory, all kernels (stores + loads)",
            "{:,.0f}",
        ),
    },
    zh={
        "version": "版本",
        "registers per thread": "每线程寄存器数",
        "transpose": "transpose（转置）",
        "stencil": "stencil（一维卷积）",
        "matmul": "matmul（矩阵乘法）",
    },
)
