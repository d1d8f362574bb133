"""The GitHub Actions workflows: two linters, and the rules they cannot see.

zizmor (security audits) and actionlint (syntax, expressions, shellcheck on every
`run:`) read .github/workflows. The tests below them pin down what this project
decided on top: a pull request's code reaches the GPU runner only on the event of a
maintainer adding `gpu-ok`, for the commit recorded in that event, and a push takes
the label away; every action is pinned to a commit; no token or secret is handed to
code that a pull request can change. The `if:` conditions are evaluated, not just
read, on the events that matter (a small evaluator of GitHub's expression language
below), so a rewording that changes their meaning fails here.
"""

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.helpers import require_tool

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
WORKFLOW_FILES = sorted(WORKFLOWS.glob("*.y*ml"))
GPU_YML = WORKFLOWS / "gpu.yml"
LABEL = "gpu-ok"
HEAD = "a" * 40  # the pull request's head in the test events
MAIN = "b" * 40  # main's head: github.sha on pull_request_target


def load(path: Path) -> dict:
    wf = yaml.safe_load(path.read_text())
    # PyYAML reads YAML 1.1, where the bare key `on` is the boolean True.
    if True in wf:
        wf["on"] = wf.pop(True)
    return wf


def test_there_are_workflows():
    names = {p.name for p in WORKFLOW_FILES}
    assert {"ci.yml", "gpu.yml"} <= names, names


# --- the linters ---------------------------------------------------------------


def test_zizmor_finds_nothing_medium_or_above():
    zizmor = require_tool("zizmor")
    proc = subprocess.run(
        [
            zizmor,
            "--offline",  # no network: online audits are left out
            "--no-config",  # no config file may switch an audit off
            "--strict-collection",  # a workflow it cannot parse is a failure
            "--no-exit-codes",  # findings are judged below, from the JSON
            "--no-progress",
            "--format",
            "json",
            str(WORKFLOWS),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"zizmor failed:\n{proc.stdout}\n{proc.stderr}"
    findings = json.loads(proc.stdout)
    serious = [
        f for f in findings if f["determinations"]["severity"] in ("Medium", "High")
    ]

    def where(f):
        loc = f["locations"][0]
        path = loc["symbolic"]["key"]["Local"]["verbatim_path"]
        row = loc["concrete"]["location"]["start_point"]["row"] + 1
        return f"{path}:{row}"

    assert not serious, "zizmor:\n" + "\n".join(
        f"  {where(f)}: {f['ident']} ({f['determinations']['severity']}): {f['desc']}"
        for f in serious
    )


def test_zizmor_ignores_only_the_gpu_trigger():
    """An ignore comment silences an audit, so each one is a decision: the only one
    is `pull_request_target` in gpu.yml, whose header says why it is safe there."""
    ignores = [
        (path.name, line.strip())
        for path in WORKFLOW_FILES
        for line in path.read_text().splitlines()
        if "zizmor: ignore" in line
    ]
    assert len(ignores) == 1, ignores
    name, line = ignores[0]
    assert name == "gpu.yml" and line.startswith("pull_request_target:"), ignores
    assert "ignore[dangerous-triggers]" in line, ignores


def test_actionlint_is_silent():
    actionlint = require_tool("actionlint")
    # Without shellcheck on PATH actionlint skips the scripts without a word.
    shellcheck = require_tool("shellcheck")
    proc = subprocess.run(
        [
            actionlint,
            "-config-file",
            str(ROOT / ".github" / "actionlint.yaml"),
            "-shellcheck",
            shellcheck,
            *map(str, WORKFLOW_FILES),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and not out, f"actionlint ({proc.returncode}):\n{out}"


# --- a small evaluator of GitHub's expressions ----------------------------------

_TOKEN = re.compile(
    r"\s*(?:(?P<op>&&|\|\||==|!=|!|\(|\)|,)"
    r"|'(?P<str>(?:[^']|'')*)'"
    r"|(?P<num>\d+)"
    r"|(?P<name>[A-Za-z_][\w-]*(?:\.(?:[A-Za-z_][\w-]*|\*))*))"
)


def _tokens(text: str) -> list[tuple[str, object]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        assert m and m.end() > pos, f"cannot read expression at: {text[pos:]!r}"
        pos = m.end()
        if m["op"]:
            out.append(("op", m["op"]))
        elif m["str"] is not None:
            out.append(("value", m["str"].replace("''", "'")))
        elif m["num"]:
            out.append(("value", int(m["num"])))
        else:
            out.append(("name", m["name"]))
    return out


def _resolve(path: str, context: dict):
    values = [context]
    spread = False  # after `*`, each step applies to every element
    for part in path.split("."):
        if part == "*":
            values = [v for x in values if isinstance(x, list) for v in x]
            spread = True
            continue
        values = [x.get(part) if isinstance(x, dict) else None for x in values]
    return values if spread else values[0]


def _equal(a, b) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()  # GitHub compares strings ignoring case
    return a == b


def evaluate(expression: str, context: dict):
    """Evaluate the subset of GitHub's expressions these workflows use: literals,
    context paths (with `*` filters), ==, !=, !, && and || (which yield an
    operand, as in JavaScript), parentheses and contains()."""
    expression = expression.strip()
    if expression.startswith("${{") and expression.endswith("}}"):
        expression = expression[3:-2]
    tokens = _tokens(expression)
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else (None, None)

    def take(value=None):
        nonlocal pos
        token = peek()
        assert value is None or token == ("op", value), f"expected {value}: {token}"
        pos += 1
        return token

    def either():
        left = both()
        while peek() == ("op", "||"):
            take()
            right = both()
            left = left if left else right
        return left

    def both():
        left = compare()
        while peek() == ("op", "&&"):
            take()
            right = compare()
            left = right if left else left
        return left

    def compare():
        left = unary()
        if peek() in (("op", "=="), ("op", "!=")):
            op = take()[1]
            right = unary()
            return _equal(left, right) == (op == "==")
        return left

    def unary():
        if peek() == ("op", "!"):
            take()
            return not unary()
        return primary()

    def primary():
        kind, value = take()
        if (kind, value) == ("op", "("):
            inner = either()
            take(")")
            return inner
        if kind == "value":
            return value
        assert kind == "name", f"unexpected {value!r}"
        if value in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[value]
        if peek() == ("op", "("):
            take()
            args = [either()]
            while peek() == ("op", ","):
                take()
                args.append(either())
            take(")")
            assert value == "contains", f"function {value} is not evaluated here"
            haystack, needle = args
            if isinstance(haystack, list):
                return any(_equal(x, needle) for x in haystack)
            return str(needle).lower() in str(haystack or "").lower()
        return _resolve(value, context)

    result = either()
    assert pos == len(tokens), f"unread: {tokens[pos:]}"
    return result


def test_the_evaluator():
    ctx = {"github": {"a": "X", "l": [{"n": "p"}, {"n": "q"}], "e": ""}}
    assert evaluate("github.a == 'x'", ctx) is True
    assert evaluate("github.missing || github.a", ctx) == "X"
    assert evaluate("github.e && 'never'", ctx) == ""
    assert evaluate("contains(github.l.*.n, 'Q') && !contains(github.l.*.n, 'r')", ctx)
    assert evaluate("${{ (github.a != 'X' || 'it''s') }}", ctx) == "it's"


# --- events ---------------------------------------------------------------------


def event(name: str, action=None, label=None, labels=(), state="open", ref=None):
    """The `github` context of a run: `name` is the event, `action` its type,
    `label` the label just added, `labels` those on the pull request."""
    github = {"event_name": name, "ref": ref or "refs/heads/main", "sha": MAIN}
    payload = {"action": action}
    if name.startswith("pull_request"):
        payload["pull_request"] = {
            "number": 7,
            "state": state,
            "head": {"sha": HEAD},
            "labels": [{"name": n} for n in labels],
        }
        if label:
            payload["label"] = {"name": label}
    github["event"] = payload
    return {"github": github}


def runs(job: dict, ctx: dict) -> bool:
    """Whether a job's own `if:` lets it start (no `if:` means it always does)."""
    condition = job.get("if")
    return True if condition is None else bool(evaluate(str(condition), ctx))


PR = "pull_request_target"
APPROVED = event(PR, "labeled", label=LABEL, labels=[LABEL])
PUSHED_WITH_STALE_LABEL = event(PR, "synchronize", labels=[LABEL])
REOPENED_WITH_STALE_LABEL = event(PR, "reopened", labels=[LABEL])
OTHER_LABEL_ADDED = event(PR, "labeled", label="docs", labels=[LABEL, "docs"])
APPROVED_BUT_CLOSED = event(PR, "labeled", label=LABEL, labels=[LABEL], state="closed")
PUSH_TO_MAIN = event("push")
PUSH_ELSEWHERE = event("push", ref="refs/heads/topic")
DISPATCH = event("workflow_dispatch")


@pytest.fixture(scope="module")
def gpu_wf() -> dict:
    return load(GPU_YML)


# --- the approval rule ----------------------------------------------------------


def test_pull_requests_enter_gpu_yml_only_through_pull_request_target(gpu_wf):
    """`pull_request` would run the pull request's own copy of this file, in which a
    fork can rewrite every condition; `pull_request_target` runs main's."""
    on = gpu_wf["on"]
    assert "pull_request" not in on, "gpu.yml must not trigger on pull_request"
    assert set(on) == {"push", PR, "workflow_dispatch"}, set(on)
    assert on["push"] == {"branches": ["main"]}
    assert set(on[PR]["types"]) == {"labeled", "synchronize", "reopened"}


def test_the_gpu_job_runs_a_pull_request_only_when_gpu_ok_is_added(gpu_wf):
    gpu = gpu_wf["jobs"]["gpu"]
    assert gpu["runs-on"] == ["self-hosted", "gpu"]
    assert runs(gpu, APPROVED)
    for ctx in (
        PUSHED_WITH_STALE_LABEL,
        REOPENED_WITH_STALE_LABEL,
        OTHER_LABEL_ADDED,
        APPROVED_BUT_CLOSED,
    ):
        assert not runs(gpu, ctx), ctx["github"]["event"]
    assert runs(gpu, PUSH_TO_MAIN) and runs(gpu, DISPATCH)


def test_a_new_push_takes_the_label_away(gpu_wf):
    revoke = gpu_wf["jobs"]["revoke"]
    assert runs(revoke, PUSHED_WITH_STALE_LABEL)
    assert runs(revoke, REOPENED_WITH_STALE_LABEL)
    for ctx in (APPROVED, PUSH_TO_MAIN, DISPATCH):
        assert not runs(revoke, ctx), ctx["github"]["event_name"]
    # It touches nothing of the pull request's: no checkout, no action at all.
    assert all("uses" not in step for step in revoke["steps"])
    assert revoke["permissions"] == {"pull-requests": "write"}
    script = "\n".join(step.get("run", "") for step in revoke["steps"])
    assert f"labels/{LABEL}" in script and "DELETE" in script


def test_pull_request_code_is_the_commit_recorded_in_the_event(gpu_wf):
    """Every checkout that may fetch a pull request's code takes the head SHA of
    the event (fixed when the label was added), never a branch; other runs take
    the commit that triggered them."""
    for name in ("gpu", "site"):
        checkouts = [
            s
            for s in gpu_wf["jobs"][name]["steps"]
            if s.get("uses", "").startswith("actions/checkout@")
        ]
        assert len(checkouts) == 1, name
        ref = checkouts[0]["with"]["ref"]
        assert evaluate(ref, APPROVED) == HEAD, name
        assert evaluate(ref, PUSH_TO_MAIN) == MAIN, name
        assert evaluate(ref, DISPATCH) == MAIN, name
    env = gpu_wf["jobs"]["gpu"]["steps"][1]["env"]
    assert evaluate(env["THOUSAND_COMMIT"], APPROVED) == HEAD


def test_pages_are_deployed_only_from_pushes_to_main(gpu_wf):
    jobs = gpu_wf["jobs"]
    deploy = jobs["deploy"]
    assert runs(deploy, PUSH_TO_MAIN)
    for ctx in (APPROVED, PUSH_ELSEWHERE, DISPATCH):
        assert not runs(deploy, ctx), ctx["github"]
    upload = [
        s
        for s in jobs["site"]["steps"]
        if s.get("uses", "").startswith("actions/upload-pages-artifact@")
    ]
    assert len(upload) == 1
    assert runs(upload[0], PUSH_TO_MAIN) and not runs(upload[0], APPROVED)
    # Only deploy may write to Pages, and only deploy may mint an OIDC token.
    for name, job in jobs.items():
        granted = job.get("permissions", {})
        if name != "deploy":
            assert granted.get("pages") != "write", name
            assert "id-token" not in granted, name


def test_notebooks_are_published_for_colab_only_from_pushes_to_main(gpu_wf):
    """The posts' notebooks go to the branch Colab reads (thousand.site.notebooks)
    only with a site deployed from main, by the one job that may write contents; it
    checks out nothing, so it runs no code a pull request could have changed."""
    from thousand.site.notebooks import BRANCH

    jobs = gpu_wf["jobs"]
    job = jobs["notebooks"]
    assert runs(job, PUSH_TO_MAIN)
    for ctx in (APPROVED, PUSH_ELSEWHERE, DISPATCH):
        assert not runs(job, ctx), ctx["github"]
    assert job["needs"] == "site"
    assert not any("checkout" in s.get("uses", "") for s in job["steps"])
    assert "push --force" in job["steps"][-1]["run"]
    assert job["steps"][-1]["run"].rstrip().endswith(f" {BRANCH}")
    grants = {n: j["permissions"].get("contents") for n, j in jobs.items()}
    assert [n for n, g in grants.items() if g == "write"] == ["notebooks"]
    collect = [s for s in jobs["site"]["steps"] if "post-notebooks" in s.get("run", "")]
    assert len(collect) == 1 and runs(collect[0], PUSH_TO_MAIN)
    assert not runs(collect[0], APPROVED)


def test_jobs_that_may_run_pull_request_code_cannot_write_or_read_secrets(gpu_wf):
    for name in ("gpu", "site"):
        granted = gpu_wf["jobs"][name]["permissions"]
        assert "write" not in granted.values(), (name, granted)
    assert "secrets." not in GPU_YML.read_text(), "gpu.yml must reference no secret"


# --- rules for every workflow ---------------------------------------------------

PINNED = re.compile(
    r"^\s*(?:-\s+)?uses:\s+([\w.-]+/[\w./-]+)@([0-9a-f]{40})\s+#\s+v\d+(?:\.\d+){0,2}\s*$"
)


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_every_action_is_pinned_to_a_commit_with_its_version(path):
    lines = [line for line in path.read_text().splitlines() if "uses:" in line]
    bad = [line.strip() for line in lines if not PINNED.match(line)]
    assert not bad, "pin to a 40-hex commit with '# vX.Y.Z':\n" + "\n".join(bad)
    # The same number of steps use actions as the lines read above: none is hidden
    # in a flow mapping or a multi-line key the regex would miss.
    steps = [s for job in load(path)["jobs"].values() for s in job.get("steps", [])]
    assert sum("uses" in s for s in steps) == len(lines)


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_every_checkout_drops_the_token(path):
    for name, job in load(path)["jobs"].items():
        for step in job.get("steps", []):
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step.get("with", {}).get("persist-credentials") is False, name


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_permissions_are_granted_per_job(path):
    wf = load(path)
    assert wf.get("permissions") == {}, "top-level permissions must be {}"
    for name, job in wf["jobs"].items():
        assert isinstance(job.get("permissions"), dict), f"{name}: no permissions"


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_no_expression_is_pasted_into_a_script(path):
    """`${{ }}` in a `run:` is substituted into the script's text before the shell
    reads it, so a branch name or title could become a command; values reach
    scripts through `env:` instead."""
    for name, job in load(path)["jobs"].items():
        for step in job.get("steps", []):
            assert "${{" not in step.get("run", ""), (name, step.get("name"))


# --- a contributor's pull request -------------------------------------------------


def _step_running(job: dict, words: str) -> dict:
    steps = [s for s in job["steps"] if words in s.get("run", "")]
    assert len(steps) == 1, f"no single step runs {words!r}"
    return steps[0]


def test_a_pull_request_records_only_what_is_new_or_changed(gpu_wf):
    """On pull_request_target the GPU job runs `--stale`, so a new point does not
    re-record, and move the figures of, every other page; a push to main and a
    manual run still make the full run."""
    step = _step_running(gpu_wf["jobs"]["gpu"], "python -m thousand.bench")
    script = step["run"]
    assert step["env"]["EVENT"] == "${{ github.event_name }}"
    branch = re.search(
        r'if \[ "\$EVENT" = pull_request_target \]; then(.*?)else(.*?)fi', script, re.S
    )
    assert branch, script
    pr, other = branch.groups()
    assert "python -m thousand.bench --stale" in pr
    assert "python -m thousand.bench\n" in other and "--stale" not in other
    assert "python -m thousand.bench.evidence $GITHUB_RUN_ID" in script


def test_the_site_job_spares_the_placeholders_its_own_run_fills(gpu_wf):
    site = gpu_wf["jobs"]["site"]
    assert site["env"]["THOUSAND_EVIDENCE_UNCOMMITTED"] == "1"
    ci = load(WORKFLOWS / "ci.yml")
    for job in ci["jobs"].values():  # never where the ledger is the committed one
        assert "THOUSAND_EVIDENCE_UNCOMMITTED" not in job.get("env", {})


def test_ci_runs_the_pinned_linters():
    """A `lint` job installs the dev extra and runs .ci/lint; the extra pins ruff
    and clang-format to exact versions, so CI and a contributor agree."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    lint = load(WORKFLOWS / "ci.yml")["jobs"]["lint"]
    script = _step_running(lint, ".ci/lint")["run"]
    assert 'pip install -q -e ".[dev]"' in script
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]["dev"]
    assert sorted(d.split("==")[0] for d in dev) == ["clang-format", "ruff"]
    assert all(re.fullmatch(r"[\w-]+==[\d.]+", d) for d in dev), dev
    text = (ROOT / ".ci" / "lint").read_text()
    for command in ("ruff check", "ruff format --check", "clang-format --dry-run"):
        assert command in text
