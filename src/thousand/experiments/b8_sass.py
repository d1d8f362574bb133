"""B8: what unrolling does to the machine code.

unroll.cu is compiled to a cubin for the run's GPU (the architecture read from the
device, the package's own nvcc flags), cuobjdump disassembles it into SASS, and the
instructions of each kernel are counted by kind. The same helpers serve the B8
snippets, which print the SASS itself.

python -m thousand.experiments b8-sass
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from thousand.cuda import NvccMissing, device_info, nvcc_path, source_path
from thousand.cuda.compiler import KERNEL_DIR, NVCC_FLAGS
from thousand.experiments import Experiment, Note


class ToolMissing(RuntimeError):
    """A CUDA toolkit program this needs is not installed."""


def cuda_tool(name: str) -> str:
    """A CUDA toolkit program: on PATH, beside nvcc or under $CUDA_HOME/bin."""
    found = shutil.which(name)
    if found:
        return found
    places = []
    try:
        places.append(Path(nvcc_path()).resolve().parent)
    except NvccMissing:
        pass
    if os.environ.get("CUDA_HOME"):
        places.append(Path(os.environ["CUDA_HOME"]) / "bin")
    for place in places:
        if (place / name).is_file():
            return str(place / name)
    raise ToolMissing(
        f"{name} is not installed: not on PATH, not beside nvcc and not under "
        "$CUDA_HOME/bin. It comes with the CUDA toolkit (Debian and Ubuntu: "
        "nvidia-cuda-toolkit); put the toolkit's bin/ on PATH"
    )


def compile_cubin(source: Path, arch: str, out: Path, flags: tuple = ()) -> str:
    """nvcc -cubin with the package's flags; returns what nvcc printed (warnings,
    and ptxas's report when `flags` asks for it with -Xptxas -v)."""
    cmd = [nvcc_path(), *NVCC_FLAGS, "-cubin", f"-arch={arch}", "-I", str(KERNEL_DIR)]
    cmd += [*flags, str(source), "-o", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"nvcc failed on {source.name} for {arch}:\n{done.stderr}")
    return done.stderr + done.stdout


def _cuobjdump(*args: str) -> str:
    tool = cuda_tool("cuobjdump")
    disassembler = Path(cuda_tool("nvdisasm")).parent  # cuobjdump -sass runs it
    path = f"{disassembler}{os.pathsep}{os.environ.get('PATH', '')}"
    done = subprocess.run(
        [tool, *args], capture_output=True, text=True, env={**os.environ, "PATH": path}
    )
    if done.returncode != 0:
        raise RuntimeError(f"cuobjdump {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout


@dataclass(frozen=True)
class Instruction:
    address: int  # bytes from the kernel's start; each instruction is 16 bytes
    predicate: str  # "@P0", "@!P0" or "": which threads execute it
    opcode: str  # "LDG.E": the operation and its modifiers
    operands: str  # "R6, desc[UR4][R2.64]": destination first

    @property
    def base(self) -> str:
        return self.opcode.split(".")[0]  # LDG.E -> LDG

    def target(self) -> int | None:
        """Where a branch goes (BRA 0x130), else None."""
        found = re.search(r"0x([0-9a-f]+)\s*$", self.operands)
        return int(found[1], 16) if self.base == "BRA" and found else None

    def __str__(self) -> str:
        text = f"{self.opcode} {self.operands}".strip()
        return f"/*{self.address:04x}*/ {self.predicate:>5} {text} ;"


# `/*0130*/   @!P0 LDG.E R6, desc[UR4][R2.64] ;   /* 0x0000000402067981 */`
LINE = re.compile(
    r"^\s*/\*([0-9a-f]+)\*/\s+(@!?U?P\w+\s+)?([A-Z][\w.]*)\s*([^;]*?)\s*;"
)


def parse_sass(text: str) -> dict[str, list[Instruction]]:
    """cuobjdump -sass output -> each kernel's instructions, in address order,
    without the NOPs that pad the code and the branch-to-itself after the last
    EXIT (the hardware never reaches it)."""
    kernels: dict[str, list[Instruction]] = {}
    current = None
    for line in text.splitlines():
        head = re.match(r"\s*Function : (\w+)", line)
        if head:
            current = kernels.setdefault(head[1], [])
            continue
        m = LINE.match(line)
        if m and current is not None:
            ins = Instruction(int(m[1], 16), (m[2] or "").strip(), m[3], m[4])
            if ins.base != "NOP" and ins.target() != ins.address:
                current.append(ins)
    return kernels


def loops(code: list[Instruction]) -> list[list[Instruction]]:
    """Every loop body: from a backward branch's target to the branch itself."""
    found = []
    for ins in code:
        to = ins.target()
        if to is not None and to < ins.address:
            found.append([i for i in code if to <= i.address <= ins.address])
    return found


# --8<-- [start:classes]
CLASSES = {  # the kinds of instruction the chart counts, by opcode without modifiers
    "global loads (LDG)": {"LDG"},
    "float adds (FADD)": {"FADD"},
    "integer and address arithmetic": {
        *("IMAD", "IADD3", "LEA", "SHF", "LOP3", "VIADDMNMX", "VIMNMX"),
        *("UIMAD", "UIADD3", "ULEA", "USHF", "ULOP3"),  # U: the uniform datapath
    },
    "compares (ISETP)": {"ISETP", "UISETP", "PLOP3"},
    "branches (BRA, BRX)": {"BRA", "BRX"},
}
OTHER = "other (S2R, LDC, MOV, STG, EXIT, ...)"


def kind(ins: Instruction) -> str:
    return next((k for k, ops in CLASSES.items() if ins.base in ops), OTHER)


# --8<-- [end:classes]


def registers(cubin: Path) -> dict[str, int]:
    """Registers per thread of each kernel, as ptxas allotted them."""
    text = _cuobjdump("-res-usage", str(cubin))
    return {
        m[1]: int(m[2]) for m in re.finditer(r"Function (\w+):\s*\n\s*REG:(\d+)", text)
    }


def ptxas_report(text: str) -> dict[str, dict[str, int]]:
    """What `nvcc -Xptxas -v` said -> each kernel's registers and spilled bytes."""
    report = {}
    for part in re.split(r"(?=ptxas info\s*: Compiling entry function)", text):
        name = re.search(r"Compiling entry function '(\w+)'", part)
        if name:

            def number(pattern: str, part=part) -> int:
                found = re.search(pattern, part)
                return int(found[1]) if found else 0

            report[name[1]] = {
                "registers": number(r"Used (\d+) registers"),
                "spill_stores": number(r"(\d+) bytes spill stores"),
                "spill_loads": number(r"(\d+) bytes spill loads"),
            }
    return report


def disassemble(source: Path, arch: str, flags: tuple = ()):
    """(each kernel's SASS, its registers, nvcc's messages) for `source`."""
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / f"{source.stem}.cubin"
        said = compile_cubin(source, arch, cubin, flags)
        code = parse_sass(_cuobjdump("-sass", str(cubin)))
        return code, registers(cubin), said


def unroll_sass(arch: str):
    """unroll.cu for `arch` (sm_90): each kernel's SASS and registers."""
    code, regs, _ = disassemble(source_path("unroll"), arch)
    return code, regs


VERSIONS = ("v1", "v2", "v3", "v4")


def run(quick: bool) -> dict:
    del quick  # compiling is quick either way
    major, minor = device_info()["compute_capability"].split(".")
    code, regs = unroll_sass(f"sm_{major}{minor}")
    kernels = [code[f"unroll_{v}"] for v in VERSIONS]
    counts = {k: [sum(kind(i) == k for i in c) for c in kernels] for k in CLASSES}
    counts[OTHER] = [sum(kind(i) == OTHER for i in c) for c in kernels]
    v1, v2, v3, v4 = kernels
    from thousand.kernels.unroll import V2_ROWS

    return {
        "kind": "bars",
        "x": {"label": "version", "values": list(VERSIONS)},
        "y": {"label": "instructions in the kernel", "format": "{:,.0f}"},
        "series": counts,
        "notes": {
            "v1_loop": len(loops(v1)[0]),
            "v2_per_row": len(v2) / V2_ROWS,
            "v2_branches": counts["branches (BRA, BRX)"][1],
            "v3_loop": len(max(loops(v3), key=len)),
            "v4_vs_v2": len(v4) / len(v2),
            **{f"regs_{v}": regs[f"unroll_{v}"] for v in VERSIONS},
        },
    }


EXPERIMENT = Experiment(
    name="b8-sass",
    title={
        "zh": "unroll 各版本的 SASS：每类指令各有多少条（静态计数）",
        "en": "The SASS of each unroll version: instructions of each kind, counted",
    },
    run=run,
    families=("unroll",),
    gpu_only=(
        "it counts the SASS that the run's nvcc makes for the run's GPU (the "
        "architecture is read from the device), disassembled with cuobjdump"
    ),
    notes={
        "v1_loop": Note(
            "v1 循环体的指令条数（每一行执行一遍）",
            "v1: instructions in the loop body, run once per row",
            "{:,.0f}",
        ),
        "v2_per_row": Note(
            "v2 全部指令条数除以行数 16（没有循环，每条只执行一遍）",
            "v2: all its instructions over its 16 rows (no loop: each runs once)",
            "{:,.1f}",
        ),
        "v2_branches": Note("v2 的分支指令条数", "v2: branch instructions", "{:,.0f}"),
        "v3_loop": Note(
            "v3 主循环体的指令条数（每 4 行执行一遍）",
            "v3: instructions in the main loop body, run once per 4 rows",
            "{:,.0f}",
        ),
        "v4_vs_v2": Note(
            "v4 的代码量是 v2 的几倍（6 个实例加一个后备循环）",
            "v4's code, as a multiple of v2's (6 instances and a fallback loop)",
            "{:,.1f}×",
        ),
        "regs_v1": Note("v1 每线程寄存器数", "v1: registers per thread", "{:,.0f}"),
        "regs_v2": Note("v2 每线程寄存器数", "v2: registers per thread", "{:,.0f}"),
        "regs_v3": Note("v3 每线程寄存器数", "v3: registers per thread", "{:,.0f}"),
        "regs_v4": Note("v4 每线程寄存器数", "v4: registers per thread", "{:,.0f}"),
    },
    zh={
        "version": "版本",
        "instructions in the kernel": "核函数里的指令条数",
        "global loads (LDG)": "全局内存加载 (LDG)",
        "float adds (FADD)": "浮点加法 (FADD)",
        "integer and address arithmetic": "整数与地址运算",
        "compares (ISETP)": "比较 (ISETP)",
        "branches (BRA, BRX)": "分支 (BRA, BRX)",
        OTHER: "其他 (S2R, LDC, MOV, STG, EXIT, ...)",
    },
)
