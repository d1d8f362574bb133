"""Every `python -m thousand...` command: --help prints usage and runs nothing, and a
bad invocation stops with argparse's exit code 2 (1 for a domain error) and a
message naming what is wrong, never a traceback."""

import os
import subprocess
import sys

import pytest

from tests.helpers import require_tool
from thousand.bench.ledger import ROOT

COMMANDS = [
    ["thousand.site"],
    ["thousand.site", "build"],
    ["thousand.site", "serve"],
    ["thousand.site", "measure"],
    ["thousand.site", "drift"],
    ["thousand.models.train"],
    ["thousand.models.corpus"],
    ["thousand.models.bpe"],
    ["thousand.experiments"],
    ["thousand.cpu.bench"],
    ["thousand.cpu.pictures"],
    ["thousand.kernels"],
    ["thousand.scaffold"],
    ["thousand.scaffold.todo"],
    ["thousand.bench.evidence"],
]


def run(args: list[str], env: dict | None = None, timeout: float = 60):
    # The CPU backend whatever the machine: the GPU-only refusal below needs it.
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "THOUSAND_BACKEND": "cpu", **(env or {})},
    )


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_prints_usage_and_runs_nothing(command):
    # Generous for two shared cores; each takes well under a second alone.
    done = run([*command, "--help"], timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m thousand"), done.stdout
    assert "Traceback" not in done.stderr
    # Nothing started: no kernel checked, no experiment run, no build begun.
    assert ": ok" not in done.stdout and "\n== " not in done.stdout
    assert "mkdocs" not in done.stdout + done.stderr


BAD = [
    # (arguments, environment, exit code, words the message must hold)
    (["thousand.site"], {}, 2, ["required", "COMMAND"]),
    (["thousand.site", "deploy"], {}, 2, ["invalid choice", "build"]),
    (["thousand.site", "build", "--bogus"], {}, 2, ["unrecognized", "--bogus"]),
    (["thousand.site", "build", "--port", "8000"], {}, 2, ["--port"]),
    (["thousand.site", "serve", "--port", "0"], {}, 2, ["--port", "1 to 65535"]),
    (["thousand.site", "serve", "--port", "65536"], {}, 2, ["--port"]),
    (["thousand.site", "serve", "--port", "http"], {}, 2, ["--port", "'http'"]),
    (["thousand.site", "measure", "--site-dir", "x"], {}, 2, ["--site-dir"]),
    # --site-dir: checked before anything is built or read
    (
        ["thousand.site", "build", "--site-dir", "pyproject.toml"],
        {},
        2,
        ["--site-dir", "is a file"],
    ),
    (
        ["thousand.site", "build", "--site-dir", "pyproject.toml/out"],
        {},
        2,
        ["--site-dir", "is a file"],
    ),
    (
        ["thousand.site", "build", "--site-dir", "docs/zh/out"],
        {},
        2,
        ["--site-dir", "inside docs/"],
    ),
    (
        ["thousand.site", "serve", "--site-dir", "snippets"],
        {},
        2,
        ["--site-dir", "inside snippets/"],
    ),
    (
        ["thousand.site", "build", "--site-dir", "."],
        {},
        2,
        ["--site-dir", "the repository"],
    ),
    (["thousand.site", "build", "--site-dir", ""], {}, 2, ["--site-dir", "empty name"]),
    (
        ["thousand.site", "build", "--site-dir", "/proc/out"],
        {},
        2,
        ["--site-dir", "not writable"],
    ),
    (
        ["thousand.site", "build", "--site-dir"],
        {},
        2,
        ["--site-dir", "expected one argument"],
    ),
    (["thousand.site", "build", "extra"], {}, 2, ["unrecognized", "extra"]),
    (["thousand.site", "drift", "--margin", "lots"], {}, 2, ["--margin", "'lots'"]),
    (["thousand.site", "drift", "--margin", "-1"], {}, 2, ["--margin", "percent"]),
    (["thousand.site", "drift", "--since", "no-such-rev"], {}, 1, ["'no-such-rev'"]),
    (["thousand.models.train"], {}, 2, ["required", "model"]),
    (["thousand.models.train", "cnn"], {}, 2, ["'cnn'", "lenet", "mlp"]),
    (["thousand.models.train", "mlp", "--epochs", "0"], {}, 2, ["--epochs", "1"]),
    (["thousand.models.train", "mlp", "--epochs", "-1"], {}, 2, ["--epochs"]),
    (["thousand.models.train", "mlp", "--epochs", "2.5"], {}, 2, ["--epochs"]),
    (["thousand.models.train", "mlp", "--seed", "-1"], {}, 2, ["--seed", "0"]),
    (["thousand.models.train", "mlp", "--seed", "x"], {}, 2, ["--seed"]),
    (
        ["thousand.models.train", "mlp", "--quick", "--epochs", "3"],
        {},
        2,
        ["--quick", "epochs"],
    ),
    (["thousand.models.train", "mlp", "--lr", "1"], {}, 2, ["unrecognized", "--lr"]),
    (["thousand.experiments", "nope"], {}, 2, ["'nope'", "b5-transfers"]),
    (["thousand.experiments", "--bogus"], {}, 2, ["unrecognized", "--bogus"]),
    # Named, GPU-only, on the CPU backend: refused before anything runs.
    (["thousand.experiments", "b5-streams"], {}, 1, ["b5-streams", "only on a GPU"]),
    (["thousand.cpu.bench", "--repeat", "0"], {}, 2, ["--repeat", "1"]),
    (["thousand.cpu.bench", "extra"], {}, 2, ["unrecognized", "extra"]),
    (["thousand.cpu.pictures", "--out", "x"], {}, 2, ["unrecognized", "--out"]),
    (["thousand.kernels", "--family", "nope"], {}, 2, ["--family", "'nope'", "axpy"]),
    (["thousand.kernels", "--family", ""], {}, 2, ["--family"]),
    (
        ["thousand.kernels"],
        {"THOUSAND_FAMILIES": "axpy,nope"},
        2,
        ["THOUSAND_FAMILIES", "'nope'", "reduce"],
    ),
    (["thousand.kernels", "--large"], {}, 2, ["unrecognized", "--large"]),
    (["thousand.scaffold"], {}, 2, ["required", "--slug", "--family"]),
    (["thousand.scaffold", "B2", "--family", "axpy"], {}, 2, ["--slug"]),
    (
        ["thousand.scaffold", "B2", "--slug", "s", "--family", "f", "--bogus"],
        {},
        2,
        ["unrecognized", "--bogus"],
    ),
    (["thousand.scaffold.todo", "/nonexistent/root"], {}, 2, ["ROOT", "/nonexistent"]),
    (["thousand.scaffold.todo", "/"], {}, 2, ["ROOT", "docs/"]),
    (["thousand.scaffold.todo", ".", "more"], {}, 2, ["unrecognized", "more"]),
]


@pytest.mark.parametrize(
    "args,env,code,words", BAD, ids=[" ".join(b[0][1:]) or b[0][0] for b in BAD]
)
def test_a_bad_invocation_is_refused_plainly(args, env, code, words):
    done = run(args, env)
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    for word in words:
        assert word in done.stderr, f"{word!r} not in: {done.stderr}"
    assert ": ok" not in done.stdout  # nothing was checked on the way


def test_the_kernel_check_runs_only_the_families_chosen():
    require_tool("g++")
    picked = run(["thousand.kernels", "--small"], {"THOUSAND_FAMILIES": "axpy"})
    assert picked.returncode == 0, picked.stdout + picked.stderr
    lines = picked.stdout.splitlines()
    assert lines[0].startswith("checking 1 of ") and "THOUSAND_FAMILIES" in lines[0]
    assert lines[1:] == ["axpy: ok"]
    # --family wins over the environment, and a name given twice runs once.
    done = run(
        ["thousand.kernels", "--small", "--family", "copy", "--family", "copy,axpy"],
        {"THOUSAND_FAMILIES": "nope"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[1:] == ["copy: ok", "axpy: ok"]


def test_train_refuses_fewer_than_one_epoch_before_loading_anything():
    from thousand.models import train

    for epochs in (0, -1):
        with pytest.raises(ValueError, match="at least 1"):
            train.train("mlp", epochs=epochs, log=lambda *_: None)
