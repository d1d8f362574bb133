"""Every snippet runs on the GPU; the GPU run records what it printed.

With THOUSAND_RECORD_DIR set (the GPU run sets it), each output is written there as
<snippet>.txt; `python -m thousand.bench` then moves it where the page includes it.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from thousand.bench.ledger import ROOT, snippets

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("path", snippets(), ids=lambda p: p.name)
def test_snippet_runs(path: Path, record_property):
    record_property("snippet", path.name)
    done = subprocess.run(
        [sys.executable, str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert done.returncode == 0, f"{path.name} failed:\n{done.stdout}\n{done.stderr}"
    assert done.stdout.strip(), f"{path.name} printed nothing"
    record_dir = os.environ.get("THOUSAND_RECORD_DIR")
    if record_dir:
        (Path(record_dir) / f"{path.stem}.txt").write_text(done.stdout)
