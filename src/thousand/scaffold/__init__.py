"""Scaffold a new knowledge point: `python -m thousand.scaffold B2 --slug ...`.

It writes, from the templates beside this file, everything a point needs so that a
contributor starts from the project's conventions:

    docs/zh/blog/posts/<slug>.md, docs/en/blog/posts/<slug>.md   the two posts
    src/thousand/kernels/<family>.cu + <family>.py               a working family
    snippets/<point>_<family>.py                                 the "run it" program
    tests/cpu/test_<family>.py                                   its reference tests

The kernels start, by `--kind`, as out = a * x + y (elementwise), a sum (reduction)
or a prefix sum (scan), two versions each, correct and checked, with the NumPy and
PyTorch baselines the GPU run times them against, so their tests pass on the CPU
backend and both languages build from the first minute. Every place a person must
write is marked `TODO(scaffold)`; the places that wait for the GPU run (the results
directives) are marked `TODO(scaffold:gpu ...)`, naming what they wait for.
`python -m thousand.scaffold.todo` lists both. Nothing is ever overwritten: if any
target exists, nothing is written.
"""

from __future__ import annotations

import argparse
import builtins
import datetime as dt
import keyword
import re
import sys
from dataclasses import dataclass
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent / "templates"
TODO = "TODO(scaffold)"
# A placeholder for results directives, naming what it waits for, `;` between them:
# <!-- TODO(scaffold:gpu output b2_axpy) ... -->, <!-- TODO(scaffold:gpu device; table
# axpy) ... -->. It may stay until the GPU run has recorded what it names.
GPU_TODO = re.compile(r"TODO\(scaffold:gpu ([^)]*)\)")
# The kernels a point can start from: what the scaffold's templates compute.
KINDS = {
    "elementwise": "out = a * x + y (AXPY), one thread an element",
    "reduction": "the sum of a vector: a tree in shared memory, warp shuffles",
    "scan": "the inclusive prefix sum: tiles in shared memory, warp shuffles",
}
WIDTH = 88  # code lines fit a page (pyproject.toml: ruff; .clang-format)

TRACKS = {  # the categories each build allows (mkdocs.yml, mkdocs.en.yml)
    "A": {"zh": "神经网络", "en": "Neural networks", "tags": "PyCUDA"},
    "B": {"zh": "GPU 编程", "en": "GPU programming", "tags": "CUDA, PyCUDA"},
}
POINT = re.compile(r"[AB][1-9][0-9]{0,2}")
SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
FAMILY = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
MAX_SLUG, MAX_FAMILY = 60, 24
# Paths the blog plugin generates under blog/, and the tag index blog/tags.md.
BLOG_PATHS = {"archive", "category", "page", "author", "tags"}
# Names a family module or its snippet already binds, and modules of the kernel
# package that are not families.
TAKEN = {
    "A", "FAMILY", "OP", "Family", "Real", "Staging", "Version", "annotations",
    "cdiv", "check_array", "check_block", "check_shape", "family", "grid_stride_blocks",
    "launch", "make_inputs", "np", "numpy", "pick", "rel_error",
}  # fmt: skip


class ScaffoldError(ValueError):
    """A reason not to scaffold, worded for the person at the terminal."""


@dataclass(frozen=True)
class Point:
    point: str  # "B2"
    slug: str  # "how-a-gpu-works"
    family: str  # "axpy"
    title_zh: str
    title_en: str
    date: str  # ISO date, today
    kind: str = "elementwise"  # a key of KINDS

    @property
    def track(self) -> str:
        return self.point[0]

    @property
    def snippet_stem(self) -> str:
        return f"{self.point.lower()}_{self.family}"

    def targets(self) -> dict[str, str]:
        """Repository path -> template name, in the order they are reported."""
        kernel = "kernel" if self.kind == "elementwise" else self.kind
        snippet = "snippet" if self.kind == "elementwise" else "one_input.snippet"
        test = "test" if self.kind == "elementwise" else f"{self.kind}.test"
        return {
            f"docs/zh/blog/posts/{self.slug}.md": "post.zh.md.tmpl",
            f"docs/en/blog/posts/{self.slug}.md": "post.en.md.tmpl",
            f"src/thousand/kernels/{self.family}.cu": f"{kernel}.cu.tmpl",
            f"src/thousand/kernels/{self.family}.py": f"{kernel}.py.tmpl",
            f"snippets/{self.snippet_stem}.py": f"{snippet}.py.tmpl",
            f"tests/cpu/test_{self.family}.py": f"{test}.py.tmpl",
        }


# -- checks ---------------------------------------------------------------------------


def check_point(value: str) -> str:
    point = value.strip().upper()
    if not POINT.fullmatch(point):
        raise ScaffoldError(
            f"point id {value!r}: expected the track letter and the point's number, "
            "like A3 or B12 (A: neural networks, B: GPU programming)"
        )
    return point


def check_slug(value: str) -> str:
    if not SLUG.fullmatch(value) or len(value) > MAX_SLUG:
        raise ScaffoldError(
            f"slug {value!r}: expected lowercase ASCII words joined by single hyphens, "
            f"at most {MAX_SLUG} characters, like how-a-gpu-works (both languages "
            "share it: it is the file name and the page's path)"
        )
    if value in BLOG_PATHS:
        raise ScaffoldError(
            f"slug {value!r}: the blog already uses blog/{value}/ for its own pages; "
            "choose another"
        )
    return value


def check_family(value: str) -> str:
    if not FAMILY.fullmatch(value) or len(value) > MAX_FAMILY:
        raise ScaffoldError(
            f"family {value!r}: expected a lowercase snake_case name, at most "
            f"{MAX_FAMILY} characters, like axpy or layer_norm (it names the .cu and "
            ".py files, the kernels <family>_v1, ... and the launcher <family>())"
        )
    if re.search(r"_(v[0-9]+|ref)$", value):
        raise ScaffoldError(
            f"family {value!r}: a name ending in _v<N> or _ref would read as one of "
            "another family's kernels or references"
        )
    if keyword.iskeyword(value) or keyword.issoftkeyword(value):
        raise ScaffoldError(f"family {value!r}: a Python keyword cannot name a module")
    if value in dir(builtins) or value in TAKEN:
        raise ScaffoldError(
            f"family {value!r}: its module would define {value}(), shadowing the "
            f"name {value!r} that Python or the module itself uses; choose another"
        )
    return value


def check_title(value: str, lang: str) -> str:
    title = value.strip()
    if not title or "\n" in title:
        raise ScaffoldError(f"--title-{lang}: give the post's title, on one line")
    return title


def check_root(root: Path) -> Path:
    needed = [
        "mkdocs.yml",
        "docs/tracks.yml",
        "src/thousand/kernels",
        "docs/zh/blog/posts",
        "docs/en/blog/posts",
        "snippets",
        "tests/cpu",
    ]
    missing = [p for p in needed if not (root / p).exists()]
    if missing:
        raise ScaffoldError(
            f"{root} does not look like the repository's root (no {', '.join(missing)})"
            ": run this from the root, or pass --root"
        )
    return root


def _yaml():
    try:
        import yaml
    except ImportError as e:  # PyYAML comes with MkDocs, in the docs extra
        raise ScaffoldError('PyYAML is missing: pip install -e ".[docs]"') from e
    return yaml


def _front_matter(path: Path) -> dict:
    m = re.match(r"---\n(.*?)\n---\n", path.read_text(encoding="utf-8"), re.S)
    meta = _yaml().safe_load(m.group(1)) if m else None
    return meta if isinstance(meta, dict) else {}


def _number(point_id: str) -> int:
    return int(point_id[1:])


def next_free(track: str, plan: dict) -> str:
    """The id a new point of `track` takes: one past the last, since the points
    of a track are numbered 1, 2, ... without gaps, in reading order."""
    points = plan.get(track, {}).get("points", [])
    return f"{track}{max((_number(p['id']) for p in points), default=0) + 1}"


def numbering_gaps(plan: dict) -> list[str]:
    """Where docs/tracks.yml breaks the rule that each track's points run 1, 2, ...
    in order, without gaps or repeats (empty when it holds)."""
    problems = []
    for track, content in plan.items():
        ids = [p["id"] for p in content.get("points", [])]
        for i, point_id in enumerate(ids, 1):
            if point_id != f"{track}{i}":
                problems.append(
                    f"docs/tracks.yml: track {track}'s point {i} is {point_id}, "
                    f"expected {track}{i} (numbered 1, 2, ... without gaps)"
                )
                break
    return problems


def track_titles(point: str, root: Path) -> dict[str, str]:
    """The point's titles in docs/tracks.yml, the learning paths in reading order."""
    plan = _yaml().safe_load((root / "docs" / "tracks.yml").read_text("utf-8"))
    gaps = numbering_gaps(plan)
    if gaps:
        raise ScaffoldError("; ".join(gaps))
    points = {p["id"]: p for t in plan.values() for p in t["points"]}
    if point not in points:
        free = next_free(point[0], plan)
        raise ScaffoldError(
            f"point {point} is not in docs/tracks.yml, the learning paths; a "
            f"track's points are numbered without gaps, so the next free id of "
            f"track {point[0]} is {free}. Add it there first, as the track's last "
            f"line: - {{id: {free}, zh: <中文标题>, en: <English title>}}"
        )
    return {"zh": points[point]["zh"], "en": points[point]["en"]}


def check_free(point: Point, root: Path) -> None:
    """Refuse, naming everything in the way, if any target or the point exists."""
    problems = [f"{rel} exists" for rel in point.targets() if (root / rel).exists()]
    for lang in ("zh", "en"):  # a page of the blog itself at blog/<slug>/
        for page in (f"{point.slug}.md", point.slug):
            if (root / "docs" / lang / "blog" / page).exists():
                problems.append(f"docs/{lang}/blog/{page} would share the post's path")
    for lang in ("zh", "en"):
        for post in sorted((root / "docs" / lang / "blog" / "posts").glob("*.md")):
            meta, rel = _front_matter(post), post.relative_to(root).as_posix()
            if str(meta.get("point", "")).upper() == point.point:
                problems.append(f"{rel} is already point {point.point}")
            if meta.get("slug") == point.slug and post.stem != point.slug:
                problems.append(f"{rel} already has slug {point.slug}")
    if problems:
        raise ScaffoldError(
            "nothing written, because:\n  "
            + "\n  ".join(problems)
            + "\n(the scaffold never overwrites; choose another slug, family or point,"
            " or move those files away first)"
        )


# -- rendering ------------------------------------------------------------------------


def c_signature(kernel: str, params: list[str]) -> str:
    """`extern "C" __global__ void kernel(params) {` laid out as clang-format does it
    with the project's .clang-format: parameters packed, aligned after the paren."""
    head = f'extern "C" __global__ void {kernel}('
    one = head + ", ".join(params) + ") {"
    if len(one) <= WIDTH:
        return one
    lines, line = [], head
    for i, p in enumerate(params):
        piece = p + (") {" if i == len(params) - 1 else ",")
        fresh = line in (head, " " * len(head))
        if not fresh and len(line) + 1 + len(piece) > WIDTH:
            lines.append(line)
            line = " " * len(head)
            fresh = True
        line += piece if fresh else " " + piece
    return "\n".join([*lines, line])


def py_import(module: str, names: list[str]) -> str:
    """`from module import a, b` on one line if it fits, else one name a line (ruff)."""
    one = f"from {module} import {', '.join(names)}"
    if len(one) <= WIDTH:
        return one
    return f"from {module} import (\n" + "".join(f"    {n},\n" for n in names) + ")"


PARAMS = {  # the kernels' parameters, by kind
    "elementwise": [
        "float a",
        "const float* x",
        "const float* y",
        "float* out",
        "int n",
    ],
    "reduction": ["const float* x", "float* out", "int n"],
    "scan": ["const float* x", "float* out", "float* sums", "int n"],
}
KIND_WORDS = {"elementwise": "AXPY", "reduction": "sum", "scan": "prefix sum"}
HEADINGS = {  # the posts' headings of the two versions, by kind and language
    "elementwise": {
        "zh": ("每个元素一个线程", "网格跨步循环"),
        "en": ("one thread per element", "a grid-stride loop"),
    },
    "reduction": {
        "zh": ("共享内存里的树形归约", "线程束洗牌与原子加"),
        "en": ("a tree in shared memory", "warp shuffles and one atomic add"),
    },
    "scan": {
        "zh": ("共享内存里的逐步扫描", "线程束洗牌"),
        "en": ("stepwise in shared memory", "warp shuffles"),
    },
}


def values(point: Point, lang: str | None = None) -> dict[str, str]:
    f = point.family
    params = PARAMS[point.kind]
    scalar = ["A"] if point.kind == "elementwise" else []
    out = {
        "point": point.point,
        "slug": point.slug,
        "family": f,
        "section": f.replace("_", "-"),
        "date": point.date,
        "snippet_stem": point.snippet_stem,
        "kind_words": KIND_WORDS[point.kind],
        "signature_v1": c_signature(f"{f}_v1", params),
        "signature_v2": c_signature(f"{f}_v2", params),
        "signature_add": c_signature(
            f"{f}_add", ["float* out", "const float* sums", "int n"]
        ),
        "snippet_import": py_import(f"thousand.kernels.{f}", ["FAMILY", f, f"{f}_ref"]),
        "test_import": py_import(f"thousand.kernels.{f}", [*scalar, f, f"{f}_ref"]),
    }
    if lang:
        out["title"] = point.title_zh if lang == "zh" else point.title_en
        out["category"] = TRACKS[point.track][lang]
        out["tags"] = TRACKS[point.track]["tags"]
        out["v1_heading"], out["v2_heading"] = HEADINGS[point.kind][lang]
    return out


def render(template: str, point: Point) -> str:
    lang = re.search(r"\.(zh|en)\.", template)
    text = (TEMPLATES / template).read_text(encoding="utf-8")
    for key, value in values(point, lang and lang.group(1)).items():
        text = text.replace("{{" + key + "}}", value)
    left = re.findall(r"\{\{\w+\}\}", text)
    if left:  # a template names a value nobody fills: a bug here, not the user's
        raise RuntimeError(f"{template}: unfilled {sorted(set(left))}")
    return text


# -- writing --------------------------------------------------------------------------


def scaffold(point: Point, root: Path, dry_run: bool = False) -> list[str]:
    """Write every file of `point` under `root`; return their repository paths.

    All or nothing: checked first, then each file created exclusively; if one cannot
    be, the ones written by this call are removed again.
    """
    check_root(root)
    check_free(point, root)
    files = {rel: render(t, point) for rel, t in point.targets().items()}
    if dry_run:
        return list(files)
    written: list[Path] = []
    try:
        for rel, text in files.items():
            path = root / rel
            with path.open("x", encoding="utf-8", newline="\n") as fh:
                written.append(path)
                fh.write(text)
    except OSError as e:
        for path in written:
            path.unlink(missing_ok=True)
        raise ScaffoldError(f"nothing written: {e}") from e
    return list(files)


def _marked_files(root: Path) -> list[Path]:
    places = [
        *(root / "docs").glob("*/blog/posts/*.md"),
        *(root / "src" / "thousand" / "kernels").glob("*.*"),
        *(root / "snippets").glob("*.*"),
        *(root / "tests").rglob("*.py"),
    ]
    return [p for p in sorted(places) if p.name != "test_scaffold.py" and p.is_file()]


def todo_markers(root: Path) -> list[str]:
    """`path:line: text` of every TODO(scaffold) left in posts, kernels, snippets and
    tests (`python -m thousand.scaffold.todo` prints them): prose and code a person
    must write. The placeholders waiting for the GPU run are gpu_placeholders'."""
    found = []
    for path in _marked_files(root):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for i, line in enumerate(lines, 1):
            if TODO in line:
                rel = path.relative_to(root).as_posix()
                found.append(f"{rel}:{i}: {line.strip()}")
    return found


@dataclass(frozen=True)
class GpuPlaceholder:
    """A `TODO(scaffold:gpu ...)` placeholder: where it is, and what it waits for,
    as (directive, name) pairs such as ("output", "b2_axpy"), ("table", "axpy")."""

    where: str  # path:line
    waits_for: tuple[tuple[str, str], ...]

    def unrecorded(self, ledgers: list[dict]) -> list[str]:
        """What it names that no ledger has recorded yet (empty: time to put the
        directives in its place)."""
        missing = []
        for kind, name in self.waits_for:
            if kind == "output":
                found = any(f"{name}.py" in led.get("snippets", {}) for led in ledgers)
            elif kind in ("table", "ladder", "targets"):
                found = any(
                    e.get("family") == name
                    for led in ledgers
                    for e in led.get("kernels", {}).values()
                )
            elif kind == "experiment":
                found = any(name in led.get("experiments", {}) for led in ledgers)
            else:  # the device box shows the run of whatever else the page shows
                continue
            if not found:
                missing.append(f"{kind} {name}")
        return missing


def gpu_placeholders(root: Path) -> list[GpuPlaceholder]:
    """Every `TODO(scaffold:gpu ...)` in the posts."""
    found = []
    for path in sorted((root / "docs").glob("*/blog/posts/*.md")):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for i, line in enumerate(lines, 1):
            for m in GPU_TODO.finditer(line):
                pairs = []
                for part in m.group(1).split(";"):
                    words = part.split()
                    if words:
                        pairs.append((words[0], " ".join(words[1:])))
                rel = path.relative_to(root).as_posix()
                found.append(GpuPlaceholder(f"{rel}:{i}", tuple(pairs)))
    return found


def placeholder_report(root: Path, ledgers: list[dict]) -> tuple[list[str], list[str]]:
    """(waiting, ready): the GPU placeholders that still wait for the GPU run, and
    those whose run is recorded (or that name nothing in the repository), which must
    give way to their directives. Each as `path:line: what`."""
    waiting, ready = [], []
    for ph in gpu_placeholders(root):
        unknown = [
            f"{kind} {name}"
            for kind, name in ph.waits_for
            if (kind == "output" and not (root / "snippets" / f"{name}.py").exists())
            or (
                kind in ("table", "ladder", "targets")
                and not (root / "src" / "thousand" / "kernels" / f"{name}.cu").exists()
            )
        ]
        missing = ph.unrecorded(ledgers)
        if unknown:
            ready.append(f"{ph.where}: names {', '.join(unknown)}, which do not exist")
        elif missing:
            waiting.append(f"{ph.where}: waits for the GPU run of {', '.join(missing)}")
        else:
            what = "; ".join(f"{k} {n}".strip() for k, n in ph.waits_for)
            ready.append(f"{ph.where}: recorded; put the directives ({what}) here")
    return waiting, ready


# -- the command ----------------------------------------------------------------------


def next_steps(point: Point) -> str:
    f, stem = point.family, point.snippet_stem
    return f"""\
Next steps (the Contributing page, docs/en/contributing.md, says more):
  1. Make the kernels yours. src/thousand/kernels/{f}.cu and {f}.py start as
     two versions of {point.kind}: {KINDS[point.kind]}.
     Keep the header lines, the section markers, the launchers' input checks
     and FAMILY; change snippets/{stem}.py and tests/cpu/test_{f}.py to match.
     Check them on the CPU backend:
         pytest -q -n 0 -k {f}
         python -m thousand.kernels.{f}
  2. Keep numpy_baseline and torch_baseline in {f}.py computing what the kernels
     compute: the GPU run times the kernels against them, and checks both.
  3. Write both posts, each in its own language, and preview them:
         THOUSAND_ALLOW_UNRECORDED=1 python -m thousand.site serve
     Every new Chinese term goes into docs/glossary.yml (with its avoid: list)
     and docs/jieba_userdict.txt. Link the posts before and after this point to
     it, and it to them: that means editing those published posts too.
     What is left to write:  python -m thousand.scaffold.todo
  4. Open the pull request; its template is the checklist. Until the GPU run,
     exactly these stop, each saying that it waits for it:
         test_ledger.py::test_every_point_has_had_its_gpu_run
         test_emulated_snippets.py::test_snippet_runs_on_cpu[{stem}.py]
     A maintainer's `gpu-ok` label starts the GPU run of what is new or changed.
  5. After it: python -m thousand.bench.evidence RUN_ID commits what it recorded;
     then replace each TODO(scaffold:gpu ...) in both posts with the directives
         <!-- results:output {stem} -->     under the snippet
         <!-- results:device -->
         <!-- results:table {f} -->          under the Measured heading
     and check: pytest, then python -m thousand.site build"""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m thousand.scaffold",
        description="Scaffold a new knowledge point: both posts, a kernel family, "
        "a snippet and its tests, all following the project's conventions.",
        epilog="example: python -m thousand.scaffold B2 --slug how-a-gpu-works "
        "--family axpy",
    )
    p.add_argument("point", help="the point's id in docs/tracks.yml: A1, ..., B1, ...")
    p.add_argument("--slug", required=True, help="ASCII path of both posts")
    p.add_argument("--family", required=True, help="kernel family (snake_case)")
    p.add_argument(
        "--kind",
        choices=sorted(KINDS),
        default="elementwise",
        help="the kernels to start from: "
        + "; ".join(f"{k}: {v}" for k, v in KINDS.items())
        + " (default: elementwise)",
    )
    p.add_argument("--title-zh", help="the Chinese title (default: docs/tracks.yml)")
    p.add_argument("--title-en", help="the English title (default: docs/tracks.yml)")
    p.add_argument("--root", type=Path, default=Path.cwd(), help="repository root")
    p.add_argument("--dry-run", action="store_true", help="say what would be written")
    return p


def _point(args) -> Point:
    """The checked arguments; every problem is reported at once."""
    found, errors = {}, []

    def attempt(key, check, value):
        try:
            found[key] = check(value)
        except ScaffoldError as e:
            errors.append(str(e))

    attempt("point", check_point, args.point)
    attempt("slug", check_slug, args.slug)
    attempt("family", check_family, args.family)
    for lang in ("zh", "en"):
        given = getattr(args, f"title_{lang}")
        if given is not None:
            attempt(f"title_{lang}", lambda v, lang=lang: check_title(v, lang), given)
    attempt("root", check_root, args.root)
    if "point" in found and "root" in found:
        attempt("titles", lambda p: track_titles(p, found["root"]), found["point"])
    if errors:
        raise ScaffoldError("nothing written, because:\n  " + "\n  ".join(errors))
    return Point(
        point=found["point"],
        slug=found["slug"],
        family=found["family"],
        title_zh=found.get("title_zh", found["titles"]["zh"]),
        title_en=found.get("title_en", found["titles"]["en"]),
        date=dt.date.today().isoformat(),
        kind=args.kind,
    )


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    args.root = args.root.resolve()
    try:
        point = _point(args)
        written = scaffold(point, args.root, dry_run=args.dry_run)
    except ScaffoldError as e:
        print(f"python -m thousand.scaffold: {e}", file=sys.stderr)
        return 1
    verb = "would write" if args.dry_run else "wrote"
    print(f"{point.point} · {point.title_en} · {point.title_zh}: {verb}")
    for rel in written:
        print(f"  {rel}")
    if not args.dry_run:
        print("\n" + next_steps(point))
    return 0
