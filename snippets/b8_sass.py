"""What `#pragma unroll` changes in the machine code (B8): the SASS of unroll_v1's
loop, and the whole of unroll_v2, which has no loop left. Compiled for sm_90
(Hopper) on any machine: it needs nvcc and cuobjdump, not a GPU."""

import textwrap

from thousand.experiments.b8_sass import loops, unroll_sass

code, regs = unroll_sass("sm_90")  # {kernel: [Instruction]}, {kernel: registers}

v1 = code["unroll_v1"]
(body,) = loops(v1)  # v1 has one loop: from its first line to the branch back
print(f"unroll_v1: {len(v1)} instructions, {regs['unroll_v1']} registers per thread")
print(f"its loop, {len(body)} instructions run once per row:")
for ins in body:
    print("  ", ins)

v2 = code["unroll_v2"]
print(f"\nunroll_v2: {len(v2)} instructions, {regs['unroll_v2']} registers per thread")
print(f"{len(loops(v2))} loops; every instruction in order, modifiers left out:")
opcodes = " ".join(i.base for i in v2)
print(textwrap.indent(textwrap.fill(opcodes, 77), "   "))
