"""B19's records from machines of several GPUs (thousand.distributed.record): each
one valid, drawn by the site, and made by the code as it is now (its fingerprint,
by behaviour, as the ledger's), so that a changed ring or bench fails CI until the
records are made again on such a machine."""

import json

import pytest

from thousand.distributed import record as R
from thousand.experiments import validate

RECORDS = sorted(R.RECORDS_DIR.glob("*.json"))


def test_there_are_records_for_two_and_four_gpus():
    counts = {json.loads(p.read_text())["device"]["count"] for p in RECORDS}
    assert {2, 4} <= counts


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.name)
def test_record_is_valid_and_fresh(path):
    doc = json.loads(path.read_text(encoding="utf-8"))
    world = doc["device"]["count"]
    assert path.name == f"{R.L.slug(doc['device']['name'])}-x{world}.json"
    exps = R.experiments(world)
    assert set(doc["results"]) == set(exps), "a record lacks a result, or has more"
    for name, result in doc["results"].items():
        validate(exps[name], result)
    assert "NV" in doc["device"]["topology"] or "PIX" in doc["device"]["topology"]
    assert doc["fingerprint"] == R.fingerprint(), (
        f"{path.name} was made by other code than src/thousand/distributed as it is "
        "now: run `python -m thousand.distributed.record --world "
        f"{world}` on a machine of {world} GPUs and commit what it writes"
    )


def test_every_size_was_checked_against_nccl():
    """The bench checked every size's sums against NCCL's before writing."""
    for path in RECORDS:
        rows = json.loads(path.read_text())["raw"]["all_reduce"]["rows"]
        assert all(r["error_v1"] < 1e-5 and r["error_v2"] < 1e-5 for r in rows)


def test_record_refuses_without_gpus(capsys):
    with pytest.raises(SystemExit):
        R.main(["--world", "1"])
    assert "at least 2" in capsys.readouterr().err


def test_the_cost_model_refuses_what_it_cannot_model():
    from thousand.distributed import cost_model as C

    link = C.Link(alpha_s=1e-5, bandwidth=3e11)
    assert C.ring_time(link, 1, 1e9) == 0.0
    assert C.ring_time(link, 2, 1e9) == pytest.approx(2e-5 + 1e9 / 3e11)
    for bad in ((link, 0, 1e9), (link, 2.5, 1e9), (link, 2, -1), (None, 2, 1e9)):
        with pytest.raises(ValueError, match="ring_time"):
            C.ring_time(*bad)
    with pytest.raises(ValueError, match="not whole nodes"):
        C.hierarchical_time(link, 12, 1e9)
    with pytest.raises(ValueError, match="seconds"):
        C.busbw(2, 1e9, 0)
    rows = [{"bytes": b, "library_s": 1e-5 + b / 3e11} for b in (4096, 2**20, 2**30)]
    fitted = C.fit(rows, 2)
    assert fitted.bandwidth == pytest.approx(3e11, rel=1e-6)
    with pytest.raises(ValueError, match="who"):
        C.fit(rows, 2, "nccl")
    with pytest.raises(ValueError, match="no bandwidth"):
        C.fit([{"bytes": b, "library_s": 1 / b} for b in (4096, 2**20)], 2)
