"""Parts of a stale run at once on several GPUs (thousand.bench.parallel), checked
without a GPU: the worker pool, the lock each part merges under, and what a run
leaves stale on a machine that lacks a tool."""

from __future__ import annotations

import subprocess
import threading
import time

import pytest

from thousand.bench import __main__ as bench
from thousand.bench import ledger as L
from thousand.bench import parallel


@pytest.fixture
def four_gpus(monkeypatch):
    monkeypatch.setattr(parallel, "gpu_names", lambda: ["NVIDIA H100 80GB HBM3"] * 4)


def test_check_takes_gpus_of_one_model_and_enough_parts(four_gpus, monkeypatch):
    assert parallel.check(4, None, None) == (4, 8)
    assert parallel.check(2, 6, 30.0) == (2, 6)
    for args, message in [
        ((5, None, None), r"this machine has 4 GPU\(s\)"),
        ((0, None, None), r"this machine has 4 GPU\(s\)"),
        ((4, 3, None), "at least one part per GPU"),
        ((2, None, 0.0), "wants a number of seconds above 0"),
    ]:
        with pytest.raises(ValueError, match=message):
            parallel.check(*args)
    monkeypatch.setattr(parallel, "gpu_names", lambda: ["NVIDIA H100", "NVIDIA H200"])
    with pytest.raises(ValueError, match="different models"):
        parallel.check(2, None, None)


def _fake_parts(monkeypatch, tmp_path, seconds=0.0, failing=()):
    """subprocess.run replaced by a recorder: (part, GPU, cores) of every call."""
    calls = []
    lock = threading.Lock()

    def fake_run(cmd, cwd, env, stdout, stderr, preexec_fn):
        k = int(cmd[cmd.index("--part") + 1].split("/")[0])
        with lock:
            calls.append((k, env["CUDA_VISIBLE_DEVICES"], env["THOUSAND_CACHE_DIR"]))
        time.sleep(seconds)
        return subprocess.CompletedProcess(cmd, 1 if k in failing else 0)

    monkeypatch.setattr(parallel.subprocess, "run", fake_run)
    monkeypatch.setattr(parallel, "LOGS", tmp_path / "logs")
    return calls


def test_every_part_runs_once_each_on_one_gpu(monkeypatch, tmp_path, capsys):
    calls = _fake_parts(monkeypatch, tmp_path, seconds=0.01)
    assert parallel.run(3, 7, None, []) == 0
    assert sorted(k for k, _, _ in calls) == list(range(1, 8))
    for _, gpu, cache in calls:  # each worker keeps to its GPU and its own caches
        assert gpu in {"0", "1", "2"} and cache.endswith(f"gpu{gpu}/thousand_cache_dir")
    assert "FAILED" not in capsys.readouterr().out


def test_a_failed_part_fails_the_run_and_until_stops_new_parts(monkeypatch, tmp_path):
    calls = _fake_parts(monkeypatch, tmp_path, failing={2})
    assert parallel.run(2, 4, None, []) == 1
    calls = _fake_parts(monkeypatch, tmp_path, seconds=0.2)
    assert parallel.run(1, 5, 0.1, []) == 0  # one part starts, then time is up
    assert [k for k, _, _ in calls] == [1]


def test_parts_merge_one_at_a_time(tmp_path):
    """The second writer waits until the first has written."""
    order = []
    path = tmp_path / "gpu.json"

    def part(name, hold):
        with L.merging(path):
            order.append(f"{name} in")
            time.sleep(hold)
            order.append(f"{name} out")

    first = threading.Thread(target=part, args=("first", 0.3))
    first.start()
    time.sleep(0.1)
    part("second", 0)
    first.join()
    assert order == ["first in", "first out", "second in", "second out"]


def test_a_missing_tool_leaves_its_entries_stale(monkeypatch):
    plan = {
        "kernels": {"copy", "softmax"},
        "snippets": {"b14_cutile.py", "b1_hello.py"},
        "experiments": {"b14-cutile", "a4-mlp-digits"},
        "notebooks": {"docs/en/notebooks/first-kernel.ipynb"},
    }
    monkeypatch.setattr(
        bench,
        "TOOLS",
        {
            "thousand_no_such_tool": (
                "a tool",
                {"snippets": {"b14_cutile.py"}, "experiments": {"b14-cutile"}},
            ),
            "no_such_package.sub": ("another tool", {"notebooks": None}),
            "json": ("a module every Python has", {"kernels": None}),
        },
    )
    lines = bench._leave_for_tools(plan)
    assert plan == {
        "kernels": {"copy", "softmax"},
        "snippets": {"b1_hello.py"},
        "experiments": {"a4-mlp-digits"},
        "notebooks": set(),
    }
    assert lines == [
        "left stale for want of a tool: b14_cutile.py",
        "left stale for want of a tool: b14-cutile",
        "left stale for want of another tool: docs/en/notebooks/first-kernel.ipynb",
    ]


def test_the_tools_name_entries_that_exist():
    current = L.redo_plan(None)
    for _, needs in bench.TOOLS.values():
        for section, names in needs.items():
            assert names is None or names <= current[section], (section, names)
