"""compute-sanitizer over the kernel checks: out-of-bounds accesses (memcheck),
shared-memory races (racecheck) and barrier misuse (synccheck)."""

import re
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
    # memcheck and synccheck end with "ERROR SUMMARY: 0 errors", racecheck with
    # "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"
    assert re.search(r"SUMMARY: 0 (errors|hazards)", done.stdout + done.stderr)
