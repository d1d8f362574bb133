"""compute-sanitizer over the kernel checks: out-of-bounds accesses (memcheck),
shared-memory races (racecheck) and barrier misuse (synccheck)."""

import subprocess
import sys

import pytest

from tests.helpers import require_tool
from thousand.bench.ledger import ROOT

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("tool", ["memcheck", "racecheck", "synccheck"])
def test_sanitizer_finds_nothing(tool):
    sanitizer = require_tool("compute-sanitizer")
    done = subprocess.run(
        [
            sanitizer,
            "--tool",
            tool,
            "--error-exitcode",
            "99",
            sys.executable,
            "-m",
            "thousand.kernels",
            "--small",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "ERROR SUMMARY: 0 errors" in done.stdout + done.stderr
