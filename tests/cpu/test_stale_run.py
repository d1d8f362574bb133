"""The stale-only GPU run (`python -m thousand.bench --stale`), without a GPU: what
it plans to redo, which GPU tests it keeps, and how it merges its figures into the
recorded ledger so that every ratio still comes from one run."""

import copy
import json
import os
import subprocess
import sys

import pytest

from thousand.bench import __main__ as bench
from thousand.bench import ledger as L
from thousand.site import benchmarks, render

RECORDED = "nvidia-h200"


@pytest.fixture
def recorded() -> dict:
    """The recorded ledger, its hashes and fingerprints set to the sources as they
    are now: a ledger with nothing stale, whatever the working tree holds."""
    ledger = L.load(RECORDED)
    for k in ledger["kernels"].values():
        k["source_sha256"] = L.family_sha256(k["family"])
        k["fingerprint"] = L.family_fingerprint(k["family"])
        k["check"]["passed"] = True
    from thousand.experiments import by_name

    for name, e in ledger["experiments"].items():
        e["sha256"] = by_name(name).sha256()
        e["fingerprint"] = L.experiment_fingerprint(by_name(name))
    for name, e in ledger["snippets"].items():
        e["sha256"] = L.snippet_sha256(L.SNIPPETS_DIR / name)
        e["fingerprint"] = L.snippet_fingerprint(L.SNIPPETS_DIR / name)
    return ledger


def test_a_schema_1_ledger_reads_as_one_run():
    raw = json.loads((L.RESULTS_DIR / f"{RECORDED}.json").read_text())
    # the schema-1 ledger as the GPU run wrote it until schema 2
    old = {
        "schema": 1,
        "device": {**raw["device"], "copy_peak_gbps": 3000.0, "driver_release": "x"},
        "run": {"date": "2026-11-22 05:28 UTC", "commit": "3cb82ae", "command": "c"},
        "kernels": {"copy_v1": {"family": "copy", "version": 1}},
        "snippets": {"a.py": {"sha256": "0"}},
        "series": {"b1-cpu-vs-gpu": []},
    }
    new = L.upgrade(old)
    assert new["schema"] == L.SCHEMA and len(new["runs"]) == 1
    run = new["runs"][0]
    assert run["date"] == "2026-11-22 05:28 UTC" and run["copy_peak_gbps"] == 3000.0
    assert run["driver_release"] == "x"
    assert new["kernels"]["copy_v1"]["run"] == new["snippets"]["a.py"]["run"] == 0
    assert new["series_runs"] == {"b1-cpu-vs-gpu": 0}
    assert new["schema"] == L.SCHEMA
    assert L.upgrade(new) is new  # the current schema is read as it is
    # schema 2 as schema 3: the same entries, judged by their bytes
    two = {**new, "schema": 2}
    assert L.upgrade(two) == new


def _with_changed_family(ledger: dict, family: str) -> dict:
    changed = copy.deepcopy(ledger)
    for entry in changed["kernels"].values():
        if entry["family"] == family:
            entry["source_sha256"] = entry["fingerprint"] = "0" * 64
    return changed


def test_the_plan_names_a_changed_family_and_what_imports_it(recorded):
    # families added since the last GPU run are planned too ("never run")
    new = {
        n
        for kind, n, why in L.stale_subjects(recorded)
        if kind == "kernels" and "never run" in why
    }
    assert L.redo_plan(recorded)["kernels"] == new
    changed = _with_changed_family(recorded, "row_sum")
    plan = L.redo_plan(changed)
    assert plan["kernels"] == {"row_sum"} | new
    # B10's snippets import row_sum: their printed output may change with it
    assert {"b10_pitfalls.py", "b10_strides.py"} <= plan["snippets"]
    assert "a1_mp_neuron.py" not in plan["snippets"]


def test_models_reach_their_kernels_through_imports():
    used = L.families_used([L.SNIPPETS_DIR / "a6_train_lenet.py"])
    assert {"conv2d", "avg_pool", "softmax_xent"} <= used


def test_redo_by_name_and_unknown_names(recorded):
    plan = L.redo_plan(recorded, {"b2-caches"})
    assert "b2-caches" in plan["experiments"]
    with pytest.raises(ValueError, match="no such family, snippet"):
        L.redo_plan(recorded, {"no_such_thing"})


def test_the_gpu_layer_keeps_only_the_planned_tests(tmp_path):
    plan = {
        "kernels": ["copy", "row_sum"],
        "snippets": ["b10_strides.py"],
        "experiments": ["b13-triton-softmax"],
        "notebooks": [],
    }
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    env = {**os.environ, "THOUSAND_REDO": str(tmp_path / "plan.json")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tests", "-m", "gpu", "-n", "0"]
        + ["--collect-only", "-q"],
        capture_output=True,
        text=True,
        cwd=L.ROOT,
        env=env,
        timeout=300,
    )
    ids = [line for line in done.stdout.splitlines() if "::" in line]
    assert ids, done.stdout[-2000:] + done.stderr[-2000:]
    kept = " ".join(ids)
    assert "row_sum_v1" in kept and "copy_v2" in kept and "b10_strides.py" in kept
    assert "vector_add_v1" not in kept and "matmul_v" not in kept
    assert "b10_pitfalls.py" not in kept
    assert "test_experiment[b13-triton-softmax]" in kept
    assert "test_experiment[b12" not in kept
    # thousand.beyond's checks go with the experiments that time their code
    assert "test_triton.py" in kept and "test_cutile.py" not in kept
    assert "test_numpy_baseline[row_sum]" in kept  # its library baselines too
    assert "test_numpy_baseline[matmul]" not in kept


def _bench(ledger: dict, families: set[str], scale: float) -> tuple[dict, dict]:
    """What a GPU run of `families` would hand build_ledger: the recorded timings
    of those families, `scale` times slower, as pytest-benchmark reports them."""
    out, checks = [], {}
    for name, k in ledger["kernels"].items():
        if k["family"] not in families:
            continue
        ms = k["median_ms"] * scale
        out.append(
            {
                "extra_info": {
                    "kind": "kernel",
                    "family": k["family"],
                    "kernel": name,
                    "size": k["size"],
                    "median_ms": ms,
                    "min_ms": ms,
                    "max_ms": ms,
                    "repeats": 20,
                }
            }
        )
        checks[name] = {k2: v for k2, v in k["check"].items() if k2 != "tolerance"}
        if k["numpy_ms"]:
            out.append(
                {
                    "extra_info": {"kind": "numpy", "family": k["family"]},
                    "stats": {"median": k["numpy_ms"] / 1e3},
                }
            )
    return {"benchmarks": out}, checks


def test_a_merge_keeps_each_entry_with_the_run_that_measured_it(
    recorded, tmp_path, monkeypatch
):
    monkeypatch.setattr(bench, "device_info", lambda: dict(recorded["device"]))
    monkeypatch.setattr(bench, "nvcc_version", lambda: "13.0.88")
    monkeypatch.setattr(bench.shards, "gpu_uuid", lambda: "GPU-test")
    monkeypatch.setattr(bench, "git_commit", lambda: "abc1234")
    old = _with_changed_family(recorded, "row_sum")
    plan = {s: set() for s in L.SECTIONS}
    plan["kernels"] = {"row_sum", "copy"}
    # Twice as slow this time: copy's bandwidth halves, and so does row_sum's, so
    # row_sum's share of copy is its recorded rate over the recorded copy's, not
    # halved (and not its old run's ratio: copy is re-timed in every run).
    data, checks = _bench(recorded, plan["kernels"], scale=2.0)
    ok = {"snippets": set(), "notebooks": set(), "experiments": set()}
    merged = bench.build_ledger(data, checks, tmp_path, ok, old=old, plan=plan)

    # this run comes last; the earlier ones that entries still cite stay, in order
    new = len(merged["runs"]) - 1
    assert all(r in recorded["runs"] for r in merged["runs"][:new])
    assert merged["runs"][new]["commit"] == "abc1234"
    peak = merged["runs"][new]["copy_peak_gbps"]
    copies = [k["gbps"] for k in recorded["kernels"].values() if k["family"] == "copy"]
    assert peak == pytest.approx(max(copies) / 2)
    for name, k in merged["kernels"].items():
        before = recorded["kernels"][name]
        if k["family"] in plan["kernels"]:
            assert k["run"] == new
            assert k["median_ms"] == pytest.approx(2 * before["median_ms"])
            # against this run's copy kernel (the recorded copy, halved too)
            assert k["pct_of_copy"] == pytest.approx(100 * before["gbps"] / max(copies))
            assert k["source_sha256"] == L.family_sha256(k["family"])
            assert k["fingerprint"] == L.family_fingerprint(k["family"])
        else:
            # untouched: its figures and ratios as recorded, its run renumbered
            assert {**k, "run": 0} == {**before, "run": 0}
            assert merged["runs"][k["run"]] == recorded["runs"][before["run"]]
    assert merged["device"]["copy_peak_gbps"] == peak
    assert set(merged["snippets"]) == set(recorded["snippets"])
    # targets from each entry's own run: vector_add's, untouched, is as recorded
    was = {t["what"]: t for t in recorded["targets"]}
    for t in merged["targets"]:
        if t["kernel"].startswith("vector_add"):
            assert t["ratio"] == pytest.approx(was[t["what"]]["ratio"])

    # the pages name both runs and which one each table comes from
    benchmarks.validate(merged, "merged")
    page = benchmarks.render_family("row_sum", [merged], "en")
    assert f"Measured in Run {new + 1}" in page
    zh = benchmarks.render_family("row_sum", [merged], "zh")
    assert f"运行 {new + 1}" in zh
    assert f"Run {new + 1}" in benchmarks.render_gpu(merged, "en")  # every run
    results = render.Results.__new__(render.Results)
    results.ledger, results.t, results.lang = merged, render.TEXT["en"], "en"
    box = results._device([], "blog/x/")
    assert f"{new + 1} recorded runs" in box and "abc1234" in box
    table = results._table(["row_sum"], "blog/x/")
    assert f"Measured in Run {new + 1}" in table


def test_a_merge_refuses_a_ledger_of_another_gpu(recorded, tmp_path, monkeypatch):
    other = {**recorded["device"], "name": "NVIDIA H100 80GB HBM3"}
    monkeypatch.setattr(bench, "device_info", lambda: other)
    plan = {s: set() for s in L.SECTIONS}
    plan["kernels"] = {"copy"}
    data, checks = _bench(recorded, {"copy"}, 1.0)
    with pytest.raises(SystemExit, match="the ledger is of NVIDIA H200"):
        bench.build_ledger(data, checks, tmp_path, {}, old=recorded, plan=plan)


def test_without_a_gpu_the_run_says_so_at_once():
    env = {**os.environ, "THOUSAND_NO_GPU": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "thousand.bench", "--stale"],
        capture_output=True,
        text=True,
        cwd=L.ROOT,
        env=env,
        timeout=60,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "there is none to use here" in done.stderr


@pytest.mark.parametrize(
    "args,message",
    [
        (["--stale", "--shard", "1/2"], "takes no --shard"),
        (["--redo", "copy"], "--redo and --part go with --stale"),
        (["--part", "1/2"], "--redo and --part go with --stale"),
        (["--stale", "--part", "0/2"], "K must be between 1 and N"),
        (["--shard", "3/2"], "K must be between 1 and N"),
        (["--merge", "0"], "at least 1"),
        (["--gpus", "2"], "--gpus, --split and --until go with --stale"),
        (["--stale", "--split", "4"], "--split and --until go with --gpus"),
        (["--stale", "--gpus", "2", "--part", "1/2"], "takes no --part"),
        (["--all-kernels"], "--all-kernels goes with --stale"),
        (["--stale", "--all-kernels", "--part", "1/2"], "in one run: no --gpus"),
    ],
)
def test_bad_options_are_refused(args, message):
    done = subprocess.run(
        [sys.executable, "-m", "thousand.bench", *args],
        capture_output=True,
        text=True,
        cwd=L.ROOT,
        timeout=60,
    )
    assert done.returncode == 2 and message in done.stderr, done.stderr
