"""Every notebook page runs top to bottom on the GPU; the GPU run keeps its outputs.

With THOUSAND_RECORD_DIR set (the GPU run sets it), the executed notebook is written
there under its repository path; `python -m thousand.bench` then puts it in place.
"""

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from thousand.bench.ledger import ROOT, notebooks

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize(
    "path", notebooks(), ids=lambda p: p.relative_to(ROOT).as_posix()
)
def test_notebook_runs(path: Path, record_property):
    key = path.relative_to(ROOT).as_posix()
    record_property("notebook", key)
    nb = nbformat.read(path, as_version=4)
    # The kernel inherits THOUSAND_BACKEND=gpu from the GPU run; an error in any
    # cell raises here (allow_errors=False), so no page shows a traceback.
    NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        allow_errors=False,
        record_timing=False,  # no timestamps: the file changes only when outputs do
        resources={"metadata": {"path": str(ROOT)}},
    ).execute()
    record_dir = os.environ.get("THOUSAND_RECORD_DIR")
    if record_dir:
        target = Path(record_dir) / "notebooks" / key
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
