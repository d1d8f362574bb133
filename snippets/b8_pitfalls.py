"""Three ways unrolling goes wrong (B8), with the kernels of b8_pitfalls.cu: what
nvcc makes of them for sm_90 (nvcc and cuobjdump, no GPU needed), then one run."""

import tempfile
from pathlib import Path

import numpy as np

from thousand.cuda import cdiv, compile_ptx, launch, to_device
from thousand.experiments.b8_sass import disassemble, loops, ptxas_report

CU = Path(__file__).with_suffix(".cu")  # snippets/b8_pitfalls.cu
code, _, said = disassemble(CU, "sm_90", ("-Xptxas", "-v"))

# 1. `#pragma unroll` over a trip count known only at run time. Two compilers in
# turn: NVVM writes PTX (loop marks included), ptxas turns the PTX into SASS.
warnings = [line for line in said.splitlines() if "warning" in line.lower()]
print(f"1. warnings from nvcc: {len(warnings)}")
with tempfile.TemporaryDirectory() as tmp:
    compile_ptx(CU, "sm_90", Path(tmp) / "b8.ptx")
    ptx = (Path(tmp) / "b8.ptx").read_text()
print(f"   {'':<18}{'PTX loads':>11}{'nounroll marks':>16}{'SASS loads/trip':>17}")
for name in ("sum_no_pragma", "sum_pragma_unroll"):
    entry = ptx.split(f".entry {name}(")[1].split(".entry")[0]
    marks = entry.count('.pragma "nounroll"')
    trip = max(sum(i.base == "LDG" for i in body) for body in loops(code[name]))
    print(f"   {name:<18}{entry.count('ld.global'):>11}{marks:>16}{trip:>17}")

# 2. More columns per thread, all unrolled: registers, then spills (ptxas -v).
report = ptxas_report(said)
for c in (32, 64, 128, 256):
    r = report[f"columns_{c}"]
    print(
        f"2. {c:>3} columns per thread: {r['registers']:>3} registers, "
        f"{r['spill_stores']} bytes spilled, {r['spill_loads']} bytes reloaded"
    )

# 3. Unrolled by 4 with no remainder loop: 7 rows of ones should sum to 7.
k, n = 7, 1000
x, out = to_device(np.ones((k, n), np.float32)), to_device(np.zeros(n, np.float32))
args = (x, out, np.int32(n), np.int32(k))
launch(CU, "sum_by4_no_remainder", (cdiv(n, 256),), (256,), *args)
sums = ", ".join(f"{s:g}" for s in np.unique(out.get()))
print(f"3. {k} rows of ones, {n} columns: every column sums to {sums}, not {k}")
