"""A recorded result goes stale when the code it ran changes, not when its bytes do:
comments, docstrings, snippet markers and spacing keep the fingerprint; a changed
constant, kernel line or imported helper changes it. Every edit is made to a copy of
the sources in a temporary folder, never to the repository's files."""

import copy
import json
import shutil
from pathlib import Path

import pytest

from thousand.bench import fingerprint as F
from thousand.bench import ledger as L
from thousand.experiments import by_name

REPOSITORY = L.ROOT  # before a test points the ledger at its copy


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    """A copy of the package, the snippets and the notebooks, with the ledger's
    roots pointed at it."""
    skip = shutil.ignore_patterns("__pycache__", "snapshot")
    shutil.copytree(L.SRC / "thousand", tmp_path / "src" / "thousand", ignore=skip)
    shutil.copytree(L.SNIPPETS_DIR, tmp_path / "snippets", ignore=skip)
    for nb in L.notebooks():
        to = tmp_path / nb.relative_to(L.ROOT)
        to.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(nb, to)
    monkeypatch.setattr(L, "ROOT", tmp_path)
    monkeypatch.setattr(L, "SRC", tmp_path / "src")
    monkeypatch.setattr(L, "KERNEL_DIR", tmp_path / "src" / "thousand" / "kernels")
    monkeypatch.setattr(L, "SNIPPETS_DIR", tmp_path / "snippets")
    monkeypatch.setattr(L, "DOCS_DIR", tmp_path / "docs")
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} is not in {path.name}"
    path.write_text(text.replace(old, new, 1))


class Moved:
    """An experiment whose files are the copies in `tree`."""

    def __init__(self, name: str, tree: Path):
        self.real = by_name(name)
        self.tree = tree

    def sources(self):
        return [
            self.tree / p.relative_to(REPOSITORY) if p.is_relative_to(REPOSITORY) else p
            for p in self.real.sources()
        ]


# -- kernels ------------------------------------------------------------------------


def test_a_kernel_comment_marker_or_spacing_keeps_its_fingerprint(tree):
    before, bytes_before = L.family_fingerprint("row_sum"), L.family_sha256("row_sum")
    cu = L.KERNEL_DIR / "row_sum.cu"
    edit(cu, "// row_sum: out[i]", "// A new first line.\n// row_sum: out[i]")
    edit(cu, "// this thread's row", "/* the row\n   this thread sums */")
    edit(cu, "// --8<-- [start:row-sum-v1]", "// --8<-- [start:row-sum-first]")
    edit(cu, "// --8<-- [end:row-sum-v1]", "// --8<-- [end:row-sum-first]")
    edit(cu, "if (i < rows) {", "if (i<rows)\n    {")
    launcher = L.KERNEL_DIR / "row_sum.py"
    text = launcher.read_text()
    launcher.write_text("# a comment at the top\n" + text.replace('"""', '"""Now ', 1))
    assert L.family_sha256("row_sum") != bytes_before
    assert L.family_fingerprint("row_sum") == before


def test_a_changed_kernel_line_or_launcher_constant_changes_it(tree):
    before = L.family_fingerprint("row_sum")
    cu = L.KERNEL_DIR / "row_sum.cu"
    edit(cu, "if (i < rows) {", "if (i <= rows) {")
    after_cu = L.family_fingerprint("row_sum")
    assert after_cu != before
    edit(cu, "if (i <= rows) {", "if (i < rows) {")
    assert L.family_fingerprint("row_sum") == before
    edit(L.KERNEL_DIR / "row_sum.py", "block=256", "block=128")
    assert L.family_fingerprint("row_sum") != before


def test_a_local_header_counts_in_place_of_its_include(tree):
    before = L.family_fingerprint("bias_relu")
    header = L.KERNEL_DIR / "activations.cuh"
    header.write_text("// one more comment\n" + header.read_text())
    assert L.family_fingerprint("bias_relu") == before
    text = header.read_text()
    header.write_text(text + "\n__device__ inline float same(float x) { return x; }\n")
    assert L.family_fingerprint("bias_relu") != before


def test_a_helper_in_another_package_module_counts(tree):
    before = L.family_fingerprint("copy")
    launch = L.SRC / "thousand" / "cuda" / "launch.py"
    launch.write_text("# a comment only\n" + launch.read_text())
    assert L.family_fingerprint("copy") == before
    edit(launch, "def cdiv(", "def _unused():\n    return 1\n\n\ndef cdiv(")
    assert L.family_fingerprint("copy") != before


def test_the_runtime_reaches_the_cpu_backend_only_when_it_is_chosen(tree):
    """thousand.cuda imports the CPU backend for the case where it is in use, which
    no GPU run is: a kernel's result does not follow it, B17's snippet does."""
    engine = L.SRC / "thousand" / "cpu" / "__init__.py"
    family, snippet = (
        L.family_fingerprint("copy"),
        L.snippet_fingerprint(L.SNIPPETS_DIR / "b17_cpu_backend.py"),
    )
    engine.write_text(engine.read_text() + "\nMARK = 1\n")
    assert L.family_fingerprint("copy") == family
    assert L.snippet_fingerprint(L.SNIPPETS_DIR / "b17_cpu_backend.py") != snippet


# -- snippets and experiments ---------------------------------------------------------


def test_a_snippet_follows_its_code_and_what_it_imports(tree):
    path = L.SNIPPETS_DIR / "a16_generate.py"
    before, bytes_before = L.snippet_fingerprint(path), L.snippet_sha256(path)
    edit(path, "# --8<-- [start:sample]", "# --8<-- [start:sampling]")
    edit(path, "# --8<-- [end:sample]", "# --8<-- [end:sampling]\n# and a comment")
    assert L.snippet_sha256(path) != bytes_before
    assert L.snippet_fingerprint(path) == before

    strides = L.SNIPPETS_DIR / "b10_strides.py"
    was = L.snippet_fingerprint(strides)
    row_sum = L.KERNEL_DIR / "row_sum.py"
    row_sum.write_text(row_sum.read_text() + "\n# the end\n")
    assert L.snippet_fingerprint(strides) == was
    edit(L.KERNEL_DIR / "row_sum.cu", "s += a[i * cols + k];", "s -= a[i * cols + k];")
    assert L.snippet_fingerprint(strides) != was  # the kernel it launches changed


def test_a_snippet_constant_changes_it(tree):
    path = L.SNIPPETS_DIR / "b10_strides.py"
    before = L.snippet_fingerprint(path)
    text = path.read_text()
    number = next(tok for tok in ("1024", "256", "512", "64", "32") if tok in text)
    path.write_text(text.replace(number, str(int(number) + 1), 1))
    assert L.snippet_fingerprint(path) != before


def test_an_experiment_follows_its_module_and_the_kernels_it_imports(tree):
    e = Moved("b10-layout", tree)
    before = L.experiment_fingerprint(e)
    module = e.sources()[0]
    module.write_text("# a comment\n" + module.read_text())
    assert L.experiment_fingerprint(e) == before
    edit(L.KERNEL_DIR / "copy.cu", "out[i] = x[i];", "out[i] = 2 * x[i];")
    assert L.experiment_fingerprint(e) != before
    edit(L.KERNEL_DIR / "copy.cu", "out[i] = 2 * x[i];", "out[i] = x[i];")
    assert L.experiment_fingerprint(e) == before
    edit(module, "import numpy as np", "import numpy as np\n\nEXTRA = 3")
    assert L.experiment_fingerprint(e) != before


# -- notebooks ------------------------------------------------------------------------


def _notebook(tree: Path) -> Path:
    return tree / "docs" / "en" / "notebooks" / "first-kernel.ipynb"


def _cells(path: Path, change) -> None:
    nb = json.loads(path.read_text())
    change(nb["cells"])
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def test_a_notebook_follows_its_code_cells_not_its_prose(tree):
    path = _notebook(tree)
    before = L.notebook_fingerprint(path)
    outputs = L.notebook_outputs_sha256(path)

    def prose_and_comment(cells):
        md = next(c for c in cells if c["cell_type"] == "markdown")
        md["source"] = ["A different sentence.\n"]
        code = next(c for c in cells if c["cell_type"] == "code")
        code["source"] = ["# a comment first\n", *code["source"]]

    _cells(path, prose_and_comment)
    assert L.notebook_fingerprint(path) == before
    assert L.notebook_outputs_sha256(path) == outputs

    def output(cells):
        code = next(c for c in cells if c["cell_type"] == "code")
        code["outputs"][0]["text"] = ["NVIDIA H100\n"]

    _cells(path, output)
    assert L.notebook_outputs_sha256(path) != outputs

    def code(cells):
        cell = next(c for c in cells if c["cell_type"] == "code")
        cell["source"] = [*cell["source"], "\nprint(1)\n"]

    _cells(path, code)
    assert L.notebook_fingerprint(path) != before


# -- the tokens and the tree -------------------------------------------------------


def test_cuda_tokens_drop_comments_but_not_strings_or_directive_ends():
    a = F.c_tokens('#define N 4 // four\nint x = N; /* a\nb */ char* s = "// no";')
    b = F.c_tokens('#define N 4\nint x=N;char*s="// no";')
    assert a == b
    assert "\n" in a  # the #define ends where its line does
    assert F.c_tokens("a - -b") != F.c_tokens("a--b")
    # a comment is a space: the macro goes on after one that spans lines
    assert F.c_tokens("#define X 1 /* a\n */ + 2\n") == F.c_tokens("#define X 1 + 2")
    assert F.c_tokens("#define X 1\n+ 2") != F.c_tokens("#define X 1 + 2")
    assert F.c_tokens("x = 1.5e-3f;") == ("x", "=", "1.5e-3f", ";")


def test_python_code_drops_docstrings_and_comments_only():
    one = 'def f(x):\n    """Twice x."""\n    return 2 * x  # doubled\n'
    two = "def f(x):\n\n    return 2*x\n"
    assert F.python_code(one) == F.python_code(two)
    assert F.python_code(two) != F.python_code("def f(x):\n    return 3 * x\n")
    assert F.python_code("x = 'text'") != F.python_code("x = 'other'")
    # an f-string is its parts, however a Python release splits its text
    joined = F.python_code("s = f'a{x}b'")
    assert (
        joined == F.python_code("s = f'a{x}' 'b'") == F.python_code("s = f'a{x}' f'b'")
    )
    assert joined != F.python_code("s = f'a{x}c'")
    # no field that one Python release shows and another leaves out
    assert "type_params" not in F.python_code("class A:\n    pass\n")


# -- the ledger ---------------------------------------------------------------------

FAMILIES = ("copy", "row_sum")
SNIPPETS = ("b10_strides.py", "a16_generate.py")


@pytest.fixture
def small(tree) -> dict:
    """The recorded ledger cut to two families and two snippets, migrated against
    the copied sources (each entry's bytes match them)."""
    ledger = _recorded()
    ledger["kernels"] = {
        k: e for k, e in ledger["kernels"].items() if e["family"] in FAMILIES
    }
    ledger["snippets"] = {k: e for k, e in ledger["snippets"].items() if k in SNIPPETS}
    ledger["experiments"], ledger["notebooks"] = {}, {}
    for e in ledger["kernels"].values():
        e.pop("fingerprint", None)
        e["source_sha256"] = L.family_sha256(e["family"])
    for key, e in ledger["snippets"].items():
        e.pop("fingerprint", None)
        e["sha256"] = L.snippet_sha256(L.SNIPPETS_DIR / key)
    out = tree / "docs" / "assets" / "outputs"
    shutil.copytree(L.OUTPUTS_DIR, out)
    done = L.migrate(ledger)
    assert len(done["fingerprinted"]) == len(ledger["kernels"]) + len(SNIPPETS)
    return ledger


def _recorded() -> dict:
    return json.loads((L.RESULTS_DIR / "nvidia-h200.json").read_text())


def _stale(ledger: dict) -> set[tuple[str, str]]:
    names = set(FAMILIES) | set(SNIPPETS)
    return {
        (s, n)
        for s, n, why in L.stale_subjects(ledger)
        if n in names and "never run" not in why
    }


def test_a_migrated_ledger_stays_fresh_through_comments(small, tree):
    assert _stale(small) == set()
    edit(L.KERNEL_DIR / "row_sum.cu", "// row_sum:", "// Row sums. row_sum:")
    few = "# --8<-- [start:few-shot]"
    edit(L.SNIPPETS_DIR / "a16_generate.py", few, few.replace("few-shot", "few"))
    assert L.family_sha256("row_sum") != small["kernels"]["row_sum_v1"]["source_sha256"]
    assert _stale(small) == set()
    edit(L.KERNEL_DIR / "row_sum.cu", "if (i < rows) {", "if (i < rows - 1) {")
    # the family, and the snippet that launches its kernels
    assert _stale(small) == {("kernels", "row_sum"), ("snippets", "b10_strides.py")}


def test_migration_leaves_an_entry_whose_bytes_differ(tree):
    ledger = copy.deepcopy(_recorded())
    ledger["kernels"] = {
        k: e for k, e in ledger["kernels"].items() if e["family"] in FAMILIES
    }
    for section in ("snippets", "experiments", "notebooks"):
        ledger[section] = {}
    for e in ledger["kernels"].values():
        e.pop("fingerprint", None)
        e["source_sha256"] = L.family_sha256(e["family"])
    ledger["kernels"]["row_sum_v2"]["source_sha256"] = "0" * 64
    before = copy.deepcopy(ledger)
    done = L.migrate(ledger)
    assert done["left"] == ["kernels/row_sum_v2"]
    assert "fingerprint" not in ledger["kernels"]["row_sum_v2"]
    # nothing but the fingerprints and the schema was added
    for name, e in ledger["kernels"].items():
        assert {k: v for k, v in e.items() if k != "fingerprint"} == before["kernels"][
            name
        ]
    assert ledger["schema"] == L.SCHEMA
    assert ("kernels", "row_sum") in _stale(ledger)
