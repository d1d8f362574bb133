"""The recorded GPU run matches the code as it is now: every kernel version and every
snippet was checked on a GPU since its last change, and nobody edited the outputs."""

import pytest

from thousand.bench import ledger as L

LEDGERS = L.ledger_files()


def test_there_is_a_recorded_gpu_run():
    assert LEDGERS, "no ledger in docs/assets/results: run `python -m thousand.bench`"


@pytest.mark.parametrize("path", LEDGERS, ids=lambda p: p.name)
def test_ledger_is_fresh(path):
    ledger = L.load(path)
    assert ledger["schema"] == L.SCHEMA
    stale = L.stale_entries(ledger)
    assert not stale, (
        f"{path.name} is out of date; redo the GPU run (python -m thousand.bench):\n  "
        + "\n  ".join(stale)
    )


@pytest.mark.parametrize("path", LEDGERS, ids=lambda p: p.name)
def test_targets_are_recorded_with_their_outcome(path):
    for t in L.load(path)["targets"]:
        assert t["met"] == (t["ratio"] >= t["target"])
