"""Notebook pages: both languages hold the same code, the committed outputs are a
clean top-to-bottom run (no errors, every code cell answered, in order), and the
notebook also runs on the CPU backend, as a reader without a GPU would run it.
Whether the outputs are the GPU run's own is test_ledger's job (output sha256)."""

from pathlib import Path

import pytest

from tests.helpers import execute_notebook, require_module
from thousand.bench.ledger import ROOT, notebooks

NOTEBOOKS = notebooks()


def _code(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "code"]


def test_there_is_a_notebook_page_in_each_language():
    langs = {p.relative_to(ROOT / "docs").parts[0] for p in NOTEBOOKS}
    assert langs == {"zh", "en"}


@pytest.mark.parametrize(
    "path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix()
)
def test_languages_share_the_code(path: Path):
    nbformat = require_module("nbformat")
    rel = path.relative_to(ROOT / "docs")
    other = (
        ROOT
        / "docs"
        / ("en" if rel.parts[0] == "zh" else "zh")
        / rel.relative_to(rel.parts[0])
    )
    assert _code(nbformat.read(path, 4)) == _code(nbformat.read(other, 4))


@pytest.mark.parametrize(
    "path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix()
)
def test_outputs_are_a_clean_run(path: Path):
    nbformat = require_module("nbformat")
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    counts = []
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        assert cell.outputs, (
            f"a code cell of {path.name} has no output: run the GPU run"
        )
        assert not [o for o in cell.outputs if o.output_type == "error"]
        counts.append(cell.execution_count)
    assert counts == list(range(1, len(counts) + 1)), "cells ran out of order"
    assert "GPU times" in "".join(
        o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs
    ), "the recorded outputs must come from a GPU, not the CPU backend"


@pytest.mark.parametrize(
    "path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix()
)
def test_runs_on_the_cpu_backend(path: Path, monkeypatch):
    monkeypatch.setenv("THOUSAND_BACKEND", "cpu")  # the kernel inherits it
    nb = execute_notebook(path, timeout=300)
    text = "".join(
        o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs
    )
    assert "CPU emulation times" in text
    assert "right: False" not in text and "equal to NumPy: False" not in text
