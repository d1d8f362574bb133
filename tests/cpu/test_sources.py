"""The .cu files: every kernel compiles to PTX with nvcc (sm_90 and an older
architecture, warnings shown and fatal), every kernel is registered and marked for
inclusion, and code lines fit a page (88 characters)."""

import re

import pytest

from tests.helpers import require_tool
from thousand.bench.ledger import ROOT, snippets
from thousand.cpu.build import kernels_in
from thousand.cuda import compile_ptx
from thousand.cuda.compiler import KERNEL_DIR
from thousand.kernels import all_families

FAMILIES = all_families()
# The kernel families, the timing harness's hold kernel (thousand.cuda.timing) and
# the several-GPU ring (thousand.distributed).
CU_FILES = sorted(KERNEL_DIR.glob("*.cu")) + [
    KERNEL_DIR.parent / "cuda" / "hold.cu",
    KERNEL_DIR.parent / "distributed" / "ring.cu",
]
ARCHS = ["compute_90", "compute_75"]  # Hopper, and Turing as the older target


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("cu", CU_FILES, ids=lambda p: p.name)
def test_compiles_to_ptx_without_warnings(cu, arch, tmp_path):
    require_tool("nvcc")
    warnings = compile_ptx(cu, arch, tmp_path / "out.ptx")
    assert (tmp_path / "out.ptx").stat().st_size > 0
    assert not warnings.strip(), f"nvcc warnings for {cu.name} ({arch}):\n{warnings}"


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_every_kernel_is_registered_marked_and_listed(family):
    source = (KERNEL_DIR / f"{family.name}.cu").read_text()
    kernels = list(kernels_in(source))  # the CPU build's parser: launch bounds too
    declared = [v.kernel for v in family.versions] + list(family.helpers)
    assert sorted(kernels) == sorted(declared)
    header = source.split("extern", 1)[0]
    for v in family.versions:
        assert re.match(rf"{family.name}_v{v.number}$", v.kernel)
        assert f"// v{v.number}:" in header, f"header lacks a line for v{v.number}"
        section = v.kernel.replace("_", "-")
        start = source.index(f"// --8<-- [start:{section}]")
        end = source.index(f"// --8<-- [end:{section}]")
        assert start < re.search(rf"\b{v.kernel}\(", source).start() < end


def _code_files():
    return [
        *KERNEL_DIR.glob("*.cu"),
        *KERNEL_DIR.glob("*.cuh"),
        *snippets(),
        *(ROOT / "src").rglob("*.py"),
    ]


@pytest.mark.parametrize("path", _code_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_lines_fit_on_a_page(path):
    long = [
        i + 1 for i, line in enumerate(path.read_text().splitlines()) if len(line) > 88
    ]
    assert not long, f"{path.name}: lines over 88 characters: {long}"
