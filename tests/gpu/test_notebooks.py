"""Every notebook page runs top to bottom on the GPU; the GPU run keeps its outputs.

With THOUSAND_RECORD_DIR set (the GPU run sets it), the executed notebook is written
there under its repository path; `python -m thousand.bench` then puts it in place.
"""

import os
from pathlib import Path

import pytest

from tests.helpers import execute_notebook, require_module
from thousand.bench.ledger import ROOT, notebooks

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize(
    "path", notebooks(), ids=lambda p: p.relative_to(ROOT).as_posix()
)
def test_notebook_runs(path: Path, record_property):
    nbformat = require_module("nbformat")
    key = path.relative_to(ROOT).as_posix()
    record_property("notebook", key)
    # The GPU run sets THOUSAND_BACKEND=gpu; no page may show a traceback.
    nb = execute_notebook(path, timeout=600)
    record_dir = os.environ.get("THOUSAND_RECORD_DIR")
    if record_dir:
        target = Path(record_dir) / "notebooks" / key
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
