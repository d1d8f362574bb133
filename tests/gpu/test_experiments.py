"""Every experiment runs in full on the GPU; the GPU run records each result.

With THOUSAND_RECORD_DIR set, the result goes to experiments/<name>.json there, and
`python -m thousand.bench` puts it in the ledger, where the pages draw it from.
"""

import json
import os
from pathlib import Path

import pytest

from thousand.experiments import all_experiments, run

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("experiment", all_experiments(), ids=lambda e: e.name)
def test_experiment(experiment, record_property):
    record_property("experiment", experiment.name)
    result = run(experiment)
    record_dir = os.environ.get("THOUSAND_RECORD_DIR")
    if record_dir:
        folder = Path(record_dir) / "experiments"
        folder.mkdir(exist_ok=True)
        (folder / f"{experiment.name}.json").write_text(json.dumps(result))
