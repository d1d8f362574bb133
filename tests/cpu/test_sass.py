"""The SASS tools of B8 (thousand.experiments.b8_sass): the parser on cuobjdump's
format, and, where cuobjdump is installed, on unroll.cu itself. The GPU run counts
the SASS for its own GPU (experiment b8-sass); this checks the reading of it."""

import pytest

from tests.unroll_cases import check_sass
from thousand.experiments.b8_sass import (
    OTHER,
    ToolMissing,
    cuda_tool,
    kind,
    loops,
    parse_sass,
    ptxas_report,
)

# cuobjdump -sass prints each instruction with its address and, after it, its
# encoding; a second line holds the rest of the encoding.
SASS = """
\t\tFunction : demo
\t.headerflags\t@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;      /* 0x00000a00ff017b82 */
                                                               /* 0x000fe20000000800 */
        /*0010*/               @P0 EXIT ;                      /* 0x000000000000094d */
        /*0020*/                   LDG.E R6, desc[UR4][R2.64] ; /* 0x0000000402067981 */
        /*0030*/                   IADD3 R0, R0, 0x1, RZ ;     /* 0x0000000100007810 */
        /*0040*/                   ISETP.GE.AND P0, PT, R0, UR6, PT ; /* 0x0000000600 */
        /*0050*/                   FADD R9, R6, R9 ;           /* 0x0000000906097221 */
        /*0060*/              @!P0 BRA 0x20 ;                  /* 0xfffffffc00e88947 */
        /*0070*/                   STG.E desc[UR4][R4.64], R9 ; /* 0x0000000904007986 */
        /*0080*/                   EXIT ;                      /* 0x000000000000794d */
        /*0090*/                   BRA 0x90;                   /* 0xfffffffc00fc7947 */
        /*00a0*/                   NOP;                        /* 0x0000000000007918 */
"""


def test_parse_drops_padding_and_finds_the_loop():
    code = parse_sass(SASS)["demo"]
    assert [i.base for i in code] == [
        *("LDC", "EXIT", "LDG", "IADD3", "ISETP", "FADD", "BRA", "STG", "EXIT"),
    ]
    assert code[1].predicate == "@P0" and code[6].predicate == "@!P0"
    assert code[6].target() == 0x20 and code[0].target() is None
    (body,) = loops(code)
    assert [i.address for i in body] == [0x20, 0x30, 0x40, 0x50, 0x60]
    assert str(body[-1]) == "/*0060*/  @!P0 BRA 0x20 ;"


def test_every_instruction_has_one_kind():
    code = parse_sass(SASS)["demo"]
    kinds = [kind(i) for i in code]
    assert kinds.count("global loads (LDG)") == 1
    assert kinds.count("branches (BRA, BRX)") == 1
    assert kinds.count(OTHER) == 4  # LDC, EXIT, STG, EXIT


def test_ptxas_report():
    said = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'big' for 'sm_90'
ptxas info    : Function properties for big
    96 bytes stack frame, 220 bytes spill stores, 164 bytes spill loads
ptxas info    : Used 255 registers, used 0 barriers, 96 bytes cumulative stack size
ptxas info    : Compiling entry function 'small' for 'sm_90'
ptxas info    : Function properties for small
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 0 barriers
"""
    assert ptxas_report(said) == {
        "big": {"registers": 255, "spill_stores": 220, "spill_loads": 164},
        "small": {"registers": 12, "spill_stores": 0, "spill_loads": 0},
    }


def test_a_missing_tool_is_named():
    with pytest.raises(ToolMissing, match="no-such-cuda-tool is not installed"):
        cuda_tool("no-such-cuda-tool")


def test_unroll_cu_for_sm_90():
    """What the post says of the SASS, on the real thing, where cuobjdump exists
    (the GPU layer runs it without the skip: tests/gpu/test_unroll.py)."""
    try:
        cuda_tool("cuobjdump"), cuda_tool("nvdisasm")
    except ToolMissing as e:
        pytest.skip(f"cuobjdump and nvdisasm are needed: {e}")
    check_sass()
