"""The recorded GPU run matches the code as it is now: every kernel version and every
snippet was checked on a GPU since its last change, and nobody edited the outputs."""

import pytest

from thousand.bench import ledger as L

LEDGERS = L.ledger_files()


def test_there_is_a_recorded_gpu_run():
    assert LEDGERS, "no ledger in docs/assets/results: run `python -m thousand.bench`"


@pytest.mark.parametrize("path", LEDGERS, ids=lambda p: p.name)
def test_ledger_is_fresh(path):
    """Nothing recorded has changed since its GPU run. What was never recorded (a
    new point) is the next test's, with its own message."""
    ledger = L.load(path)
    assert ledger["schema"] == L.SCHEMA
    _, stale = L.new_and_stale(ledger)
    assert not stale, (
        f"{path.name}: changed since the GPU run recorded it; redo what changed "
        "(python -m thousand.bench --stale, or a maintainer's `gpu-ok` on the pull "
        "request), then commit what it writes:\n  " + "\n  ".join(stale)
    )


def test_every_point_has_had_its_gpu_run():
    """Everything is recorded: in the site's ledger, or, for a point the site's GPU
    has never run, in another GPU's ledger (whose posts render from it)."""
    site_path = L.RESULTS_DIR / f"{L.site_slug()}.json"
    site = L.load(site_path)
    others = [L.load(p) for p in LEDGERS if p != site_path]
    waiting = L.new_elsewhere(site, others)["waiting"]
    new, _ = L.new_and_stale(site)
    unrecorded = [
        problem
        for sec, name, problem in L.stale_subjects(site)
        if problem.endswith(L.NEVER_RUN) and (sec, name) in waiting
    ]
    assert not unrecorded, (
        f"waiting for the GPU run ({site_path.name} and no other ledger has a record "
        "of these):\n  " + "\n  ".join(unrecorded) + "\n" + L.WAITING
    )


def test_another_gpus_ledger_holds_only_what_the_site_ledger_lacks():
    """A point goes to another GPU's ledger only while the site's GPU has not run
    it; once the site's ledger records it, the other entry is dropped."""
    site_path = L.RESULTS_DIR / f"{L.site_slug()}.json"
    site = L.load(site_path)
    for path in LEDGERS:
        if path == site_path:
            continue
        other = L.load(path)
        both = sorted(
            set(other.get("snippets", {})) & set(site["snippets"])
            | set(other.get("experiments", {})) & set(site["experiments"])
        )
        assert not both, f"{path.name} repeats what {site_path.name} has: {both}"


def _ledger(**sections):
    return {
        "kernels": {},
        "snippets": {},
        "experiments": {},
        "notebooks": {},
    } | sections


def test_new_and_stale_are_told_apart(monkeypatch):
    """Absent from the ledger is new; recorded with another fingerprint is stale."""
    monkeypatch.setattr(
        L,
        "stale_subjects",
        lambda ledger: [
            ("kernels", "scan", f"scan_v1: {L.NEVER_RUN}"),
            ("snippets", "b19_scan.py", f"snippets/b19_scan.py: {L.NEVER_RUN}"),
            ("kernels", "copy", "copy_v1: source changed since the GPU run"),
            ("notebooks", "x.ipynb", "x.ipynb: outputs are not what the GPU run wrote"),
        ],
    )
    new, stale = L.new_and_stale(_ledger())
    assert new == [f"scan_v1: {L.NEVER_RUN}", f"snippets/b19_scan.py: {L.NEVER_RUN}"]
    assert stale == [
        "copy_v1: source changed since the GPU run",
        "x.ipynb: outputs are not what the GPU run wrote",
    ]


def test_a_recorded_family_missing_from_the_ledger_is_new():
    """The real ledger with one family's entries taken out: they read as new, and
    nothing reads as stale."""
    ledger = L.load(L.site_slug())
    new_before, stale_before = L.new_and_stale(ledger)
    kernels = {k: e for k, e in ledger["kernels"].items() if e["family"] != "axpy"}
    new, stale = L.new_and_stale(ledger | {"kernels": kernels})
    added = set(new) - set(new_before)
    assert added and all(p.startswith("axpy_v") for p in added), added
    assert stale == stale_before


def test_the_waiting_message_says_what_to_do():
    for words in ("gpu-ok", "THOUSAND_ALLOW_UNRECORDED=1", "--stale", "evidence"):
        assert words in L.WAITING


@pytest.mark.parametrize("path", LEDGERS, ids=lambda p: p.name)
def test_targets_are_recorded_with_their_outcome(path):
    for t in L.load(path)["targets"]:
        assert t["met"] == (t["ratio"] >= t["target"])
