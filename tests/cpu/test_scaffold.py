"""python -m thousand.scaffold: a new knowledge point that follows the conventions.

Scaffolded into a copy of the repository (never this one), B2 gets both posts, a
kernel family, a snippet and a test file. They pass what every point must pass on the
CPU backend and build in both languages with --strict; the ledger then names exactly
the new kernels and snippet as not yet run on a GPU, which only the GPU run can fix.
A second run, or any bad argument, writes nothing and says why.
"""

import datetime as dt
import hashlib
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.helpers import require_tool
from thousand import scaffold as S
from thousand.bench import ledger as L
from thousand.bench.ledger import ROOT

ARGS = ["B2", "--slug", "how-a-gpu-works", "--family", "axpy"]  # in the bare root
FAMILY, SLUG = "scaffolded_axpy", "scaffolded-point"  # no real point uses these
# The id a new point of track B takes: one past the number of its points.
NEXT_B = (
    f"B{len(yaml.safe_load((ROOT / 'docs/tracks.yml').read_text())['B']['points']) + 1}"
)
HEADINGS = {
    "zh": ["你将学到", "核心思想", "历史与路线中的位置", "核函数", "自己跑一遍"]
    + ["实测", "常见陷阱", "要点与延伸阅读"],
    "en": ["You will learn", "The idea", "History and place in the path"]
    + ["The kernels", "Run it yourself", "Measured", "Pitfalls"]
    + ["Takeaways and further reading"],
}
CATEGORIES = {
    "A": {"zh": "神经网络", "en": "Neural networks"},
    "B": {"zh": "GPU 编程", "en": "GPU programming"},
}
# The working tree as a fresh clone has it: no environments, builds or caches.
TOP_LEVEL = {".git", ".venv", ".gpu", ".cache", "site", "build", "dist"}
ANYWHERE = shutil.ignore_patterns(
    "__pycache__", ".pytest_cache", ".ruff_cache", ".benchmarks", "*.egg-info",
    "node_modules",
)  # fmt: skip


def skip(folder: str, names: list[str]) -> set[str]:
    top = TOP_LEVEL if Path(folder) == ROOT else set()
    return ANYWHERE(folder, names) | (top & set(names))


def run(cmd: list[str], root: Path, **env) -> subprocess.CompletedProcess:
    """`cmd` in the copy at `root`, importing the copy's own package."""
    env = {**os.environ, "PYTHONPATH": str(root / "src"), **env}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        cmd, cwd=root, env=env, capture_output=True, text=True, timeout=600
    )


def stale(root: Path) -> set[str]:
    code = (
        "import json; from thousand.bench import ledger as L; print(json.dumps("
        "[p for f in L.ledger_files() for p in L.stale_entries(L.load(f))]))"
    )
    done = run([sys.executable, "-c", code], root)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout))


def snapshot(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for d in ("docs", "src", "snippets", "tests")
        for p in sorted((root / d).rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def unwritten_point(root: Path) -> dict:
    """The first point of docs/tracks.yml (GPU track first) that no post names."""
    written = {
        str(yaml.safe_load(p.read_text().split("---\n")[1]).get("point"))
        for p in root.glob("docs/*/blog/posts/*.md")
    }
    plan = yaml.safe_load((root / "docs/tracks.yml").read_text())
    for track in ("B", "A"):
        for point in plan[track]["points"]:
            if point["id"] not in written:
                return point
    pytest.skip("every point in docs/tracks.yml has its post: nothing to scaffold")


@dataclass
class New:
    """A point scaffolded into a copy of the repository."""

    root: Path
    point: dict  # its entry in docs/tracks.yml: id, zh, en
    printed: str
    stale_before: set[str]  # the ledger's complaints before the scaffold ran
    todo_before: set[str]  # files with TODO(scaffold) before (a point in progress)

    @property
    def stem(self) -> str:
        return f"{self.point['id'].lower()}_{FAMILY}"

    @property
    def files(self) -> list[str]:
        return [
            f"docs/zh/blog/posts/{SLUG}.md",
            f"docs/en/blog/posts/{SLUG}.md",
            f"src/thousand/kernels/{FAMILY}.cu",
            f"src/thousand/kernels/{FAMILY}.py",
            f"snippets/{self.stem}.py",
            f"tests/cpu/test_{FAMILY}.py",
        ]

    def args(self) -> list[str]:
        return [self.point["id"], "--slug", SLUG, "--family", FAMILY]


@pytest.fixture(scope="module")
def new(tmp_path_factory) -> New:
    """The next unwritten point scaffolded into a copy of the repository, by the
    command run from the copy's root as a contributor runs it."""
    root = tmp_path_factory.mktemp("repo") / "repo"
    shutil.copytree(ROOT, root, ignore=skip)
    todo = {m.split(":", 1)[0] for m in S.todo_markers(root)}
    made = New(root, unwritten_point(root), "", stale(root), todo)
    done = run([sys.executable, "-m", "thousand.scaffold", *made.args()], root)
    assert done.returncode == 0, done.stdout + done.stderr
    made.printed = done.stdout
    return made


@pytest.fixture
def bare(tmp_path) -> Path:
    """The least a root needs: its folders, docs/tracks.yml and B1's posts."""
    for d in ("src/thousand/kernels", "snippets", "tests/cpu", "docs"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "mkdocs.yml").write_text("site_name: x\n")
    (tmp_path / "src/thousand/kernels/vector_add.cu").write_text("")
    shutil.copy2(ROOT / "docs/tracks.yml", tmp_path / "docs/tracks.yml")
    for lang in ("zh", "en"):
        posts = tmp_path / "docs" / lang / "blog" / "posts"
        posts.mkdir(parents=True)
        (posts / "why-gpu.md").write_text("---\nslug: why-gpu\npoint: B1\n---\n")
    return tmp_path


def test_it_writes_the_files_and_says_what_is_next(new):
    for rel in new.files:
        assert (new.root / rel).is_file(), rel
        assert f"  {rel}\n" in new.printed
    for step in (f"pytest -q -n 0 -k {FAMILY}", "thousand.scaffold.todo", "gpu-ok"):
        assert step in new.printed
    assert f"<!-- results:output {new.stem} -->" in new.printed


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_posts_follow_the_anatomy(new, lang):
    text = (new.root / f"docs/{lang}/blog/posts/{SLUG}.md").read_text()
    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta["date"] == dt.date.today()
    assert meta["slug"] == SLUG and meta["point"] == new.point["id"]
    assert meta["authors"] == ["thousand"]
    assert meta["categories"] == [CATEGORIES[new.point["id"][0]][lang]]
    assert meta["tags"] and meta["description"]
    assert f"\n# {new.point[lang]}\n" in text  # the title in docs/tracks.yml
    headings = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    assert headings == HEADINGS[lang]
    section = FAMILY.replace("_", "-")
    for include in [
        f"src/thousand/kernels/{FAMILY}.py:ref",
        f"src/thousand/kernels/{FAMILY}.cu:{section}-v1",
        f"src/thousand/kernels/{FAMILY}.cu:{section}-v2",
        f"src/thousand/kernels/{FAMILY}.py:launchers",
        f"snippets/{new.stem}.py",
    ]:
        assert f'--8<-- "{include}"\n' in text
    # Nothing the ledger lacks yet: the directives wait for the GPU run.
    assert "results:" not in text


def test_every_file_carries_todo_markers(new):
    done = run([sys.executable, "-m", "thousand.scaffold.todo"], new.root)
    assert done.returncode == 1
    prose = done.stdout.split("\n\n")[0]  # then the placeholders, apart
    marked = {line.split(":", 1)[0] for line in prose.splitlines()}
    assert marked == set(new.files) | new.todo_before


def test_the_gpu_placeholders_say_what_they_wait_for(new):
    """Each post has two, and both wait for the GPU run of the new point: listed
    apart by todo, never as something to write now."""
    ph = [p for p in S.gpu_placeholders(new.root) if SLUG in p.where]
    assert sorted(p.waits_for for p in ph) == sorted(
        [(("output", new.stem),), (("device", ""), ("table", FAMILY))] * 2
    )
    done = run([sys.executable, "-m", "thousand.scaffold.todo"], new.root)
    assert "placeholders waiting for the GPU run" in done.stdout
    assert f"waits for the GPU run of output {new.stem}" in done.stdout
    assert "placeholders to replace now" not in done.stdout


def test_a_second_run_refuses_and_changes_nothing(new):
    before = snapshot(new.root)
    done = run([sys.executable, "-m", "thousand.scaffold", *new.args()], new.root)
    assert done.returncode == 1
    assert "nothing written" in done.stderr
    for rel in new.files:
        assert f"{rel} exists" in done.stderr
    assert f"{SLUG}.md is already point {new.point['id']}" in done.stderr
    assert snapshot(new.root) == before


def _outcome(case) -> str:
    if case.find("failure") is not None or case.find("error") is not None:
        return "failed"
    return "skipped" if case.find("skipped") is not None else "passed"


def test_the_kernels_pass_on_the_cpu_backend(new):
    """The tests every family gets, run in the copy: each version against the
    reference in the checked build, PTX compilation and registration, and the
    reference and validation tests the scaffold wrote. The
    NumPy baseline is the family's own (numpy_baseline), so nothing fails."""
    require_tool("g++")
    junit = new.root / "junit.xml"
    tests = ["test_emulated_kernels", "test_sources", "test_references"]
    done = run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0"]
        + ["-k", FAMILY]
        + [f"tests/cpu/{t}.py" for t in [*tests, f"test_{FAMILY}"]]
        + [f"--junitxml={junit}"],
        new.root,
        THOUSAND_BACKEND="cpu",
    )
    cases = ET.parse(junit).iter("testcase")
    outcome = {c.get("name"): _outcome(c) for c in cases}
    failed = {name for name, o in outcome.items() if o == "failed"}
    assert not failed, done.stdout[-3000:]
    assert f"test_numpy_baseline_computes_the_same_thing[{FAMILY}]" in outcome
    passed = {name for name, o in outcome.items() if o == "passed"}
    on_cpu = [n for n in passed if n.startswith("test_matches_reference_on_cpu[")]
    assert len(on_cpu) == 2 * 7 * 3  # versions x sizes up to 2^17 x block shapes
    assert "CPU backend: 2 kernel versions ran on the CPU" in done.stdout
    own = {
        "test_ref_is_the_exact_value_rounded_once",
        "test_ref_closed_forms",
        "test_bad_input_is_rejected",
    }
    assert own <= {n.split("[")[0] for n in passed}


def test_the_family_and_the_snippet_run_as_commands(new):
    require_tool("g++")
    family = run(
        [sys.executable, "-m", f"thousand.kernels.{FAMILY}"],
        new.root,
        THOUSAND_BACKEND="cpu",
    )
    assert family.returncode == 0, family.stdout + family.stderr
    assert "all match" in family.stdout and "not a GPU figure" in family.stdout
    snippet = run(
        [sys.executable, f"snippets/{new.stem}.py"], new.root, THOUSAND_BACKEND="cpu"
    )
    assert snippet.stdout.splitlines() == [
        f"v{v}: 1,000,003 elements, within 1e-06 of exact: True" for v in (1, 2)
    ], snippet.stderr


def test_the_ledger_names_exactly_the_new_kernels_and_snippet(new):
    after = stale(new.root)
    assert after - new.stale_before == {
        f"{FAMILY}_v1: never run on this GPU",
        f"{FAMILY}_v2: never run on this GPU",
        f"snippets/{new.stem}.py: never run on this GPU",
    }
    assert new.stale_before <= after


def test_both_languages_build_strict(new):
    out = new.root / "site-out"
    done = run(
        [sys.executable, "-m", "thousand.site", "build", "--site-dir", str(out)],
        new.root,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    for lang, page in [("zh", out), ("en", out / "en")]:
        html = (page / "blog" / SLUG / "index.html").read_text()
        assert new.point[lang] in html
        assert f"{FAMILY}_v1" in html and f"{FAMILY}_v2" in html
        assert "results:" not in html


@pytest.mark.parametrize(
    "args,message",
    [
        (["C3"], "expected the track letter and the point's number"),
        (["B"], "expected the track letter and the point's number"),
        (["B99"], "point B99 is not in docs/tracks.yml"),
        (["B99"], f"the next free id of track B is {NEXT_B}"),
        (["B2", "--kind", "stencil"], "invalid choice: 'stencil'"),
        (["B2", "--slug", "How-GPUs-Work"], "lowercase ASCII words"),
        (["B2", "--slug", "gpu--works"], "lowercase ASCII words"),
        (["B2", "--slug", "gpu_works"], "lowercase ASCII words"),
        (["B2", "--slug", "显卡"], "lowercase ASCII words"),
        (["B2", "--slug", "archive"], "the blog already uses blog/archive/"),
        (["B2", "--family", "Axpy"], "lowercase snake_case name"),
        (["B2", "--family", "2axpy"], "lowercase snake_case name"),
        (["B2", "--family", "ax-py"], "lowercase snake_case name"),
        (["B2", "--family", "a" * 25], "at most 24 characters"),
        (["B2", "--family", "axpy_v2"], "ending in _v<N> or _ref"),
        (["B2", "--family", "lambda"], "a Python keyword"),
        (["B2", "--family", "sum"], "shadowing the name 'sum'"),
        (["B2", "--family", "pick"], "shadowing the name 'pick'"),
        (["B2", "--family", "vector_add"], "src/thousand/kernels/vector_add.cu exists"),
        (["B1", "--slug", "why-gpu-again"], "why-gpu.md is already point B1"),
        (["B2", "--slug", "why-gpu"], "docs/zh/blog/posts/why-gpu.md exists"),
        (["B2", "--title-zh", "  "], "--title-zh: give the post's title"),
    ],
)
def test_bad_arguments_are_refused_clearly(bare, capsys, args, message):
    argv = [*args]
    for flag, value in [("--slug", "how-a-gpu-works"), ("--family", "axpy")]:
        if flag not in argv:
            argv += [flag, value]
    before = snapshot(bare)
    try:
        assert S.main([*argv, "--root", str(bare)]) == 1
    except SystemExit as e:  # argparse's own refusals (a --kind it does not know)
        assert e.code == 2
    assert message in capsys.readouterr().err
    assert snapshot(bare) == before


def test_the_tracks_are_numbered_without_gaps():
    plan = yaml.safe_load((ROOT / "docs/tracks.yml").read_text())
    assert S.numbering_gaps(plan) == []
    assert S.next_free("B", plan) == NEXT_B


def test_a_gap_in_the_tracks_is_named(bare, capsys):
    plan = yaml.safe_load((bare / "docs/tracks.yml").read_text())
    del plan["B"]["points"][2]  # B3 gone: B4 is third
    assert S.numbering_gaps(plan) == [
        "docs/tracks.yml: track B's point 3 is B4, expected B3 (numbered 1, 2, ... "
        "without gaps)"
    ]
    (bare / "docs/tracks.yml").write_text(yaml.safe_dump(plan, allow_unicode=True))
    assert S.main([*ARGS, "--root", str(bare)]) == 1
    assert "track B's point 3 is B4" in capsys.readouterr().err


def _ledger(snippets=(), families=()):
    return {
        "snippets": {f"{s}.py": {} for s in snippets},
        "kernels": {f"{f}_v1": {"family": f} for f in families},
    }


def test_a_placeholder_waits_until_what_it_names_is_recorded():
    ph = S.GpuPlaceholder("p.md:3", (("device", ""), ("table", "scan")))
    assert ph.unrecorded([_ledger()]) == ["table scan"]
    assert ph.unrecorded([_ledger(families=["scan"])]) == []
    out = S.GpuPlaceholder("p.md:9", (("output", "b19_scan"),))
    assert out.unrecorded([_ledger(families=["scan"])]) == ["output b19_scan"]
    assert out.unrecorded([_ledger(snippets=["b19_scan"])]) == []


@pytest.mark.parametrize("kind", ["reduction", "scan"])
def test_other_kinds_start_green_on_the_cpu_backend(tmp_path, kind):
    """The reduction and scan templates: their kernels match the reference on the
    CPU backend (checked build), they compile to PTX, their baselines compute the
    same thing and their own tests pass; the snippet prints the same lines."""
    require_tool("g++")
    root = tmp_path / "repo"
    shutil.copytree(ROOT, root, ignore=skip)
    family = f"scaffolded_{kind}"
    point = S.Point(NEXT_B, f"scaffolded-{kind}", family, "甲", "A", "2026-01-01", kind)
    S.scaffold(point, root)
    tests = ["test_emulated_kernels", "test_references", "test_sources"]
    tests += ["test_bad_input", f"test_{family}"]
    done = run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0"]
        + ["-k", family, *[f"tests/cpu/{t}.py" for t in tests]],
        root,
        THOUSAND_BACKEND="cpu",
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert "2 kernel versions ran on the CPU" in done.stdout
    snippet = run(
        [sys.executable, f"snippets/{point.snippet_stem}.py"],
        root,
        THOUSAND_BACKEND="cpu",
    )
    assert snippet.stdout.splitlines() == [
        f"v{v}: 1,000,003 elements, within 1e-05 of float64: True" for v in (1, 2)
    ], snippet.stderr


def test_every_problem_is_named_at_once(bare, capsys):
    argv = ["C3", "--slug", "Bad Slug", "--family", "class", "--root", str(bare)]
    assert S.main(argv) == 1
    err = capsys.readouterr().err
    for message in ["point id 'C3'", "slug 'Bad Slug'", "family 'class'"]:
        assert message in err


def test_one_file_in_the_way_means_none_is_written(bare, capsys):
    (bare / "snippets/b2_axpy.py").write_text("# mine\n")
    before = snapshot(bare)
    assert S.main([*ARGS, "--root", str(bare)]) == 1
    assert "snippets/b2_axpy.py exists" in capsys.readouterr().err
    assert snapshot(bare) == before


def test_a_root_that_is_not_the_repository_is_refused(tmp_path, capsys):
    assert S.main([*ARGS, "--root", str(tmp_path)]) == 1
    assert "does not look like the repository's root" in capsys.readouterr().err


def test_dry_run_writes_nothing(bare, capsys):
    before = snapshot(bare)
    assert S.main([*ARGS, "--root", str(bare), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "docs/zh/blog/posts/how-a-gpu-works.md" in out
    assert "src/thousand/kernels/axpy.cu" in out and "snippets/b2_axpy.py" in out
    assert snapshot(bare) == before


def test_no_scaffold_todo_is_left_in_the_repository():
    """Placeholders stand where prose will go; none may reach the main branch."""
    left = S.todo_markers(ROOT)
    assert not left, "write these, then delete the markers:\n  " + "\n  ".join(left)


def test_no_gpu_placeholder_outlives_its_run():
    """A `TODO(scaffold:gpu ...)` may wait for the GPU run of what it names (the
    ledger test says that the run is due); once the ledger records it, the
    directives replace it. The GPU workflow's own site job runs this against the
    evidence it has just recorded and not yet committed, where the placeholders
    cannot have been replaced: THOUSAND_EVIDENCE_UNCOMMITTED=1 spares them there."""
    ledgers = [L.load(p) for p in L.ledger_files()]
    waiting, ready = S.placeholder_report(ROOT, ledgers)
    if os.environ.get("THOUSAND_EVIDENCE_UNCOMMITTED") == "1":
        ready = [r for r in ready if "do not exist" in r]  # a typo all the same
    assert not ready, "replace these with their directives:\n  " + "\n  ".join(ready)
