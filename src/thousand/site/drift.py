"""Which posts to re-read after a GPU run: the figures each post renders that moved.

    python -m thousand.site drift [--since REV] [--margin PCT] [--ledger SLUG]

No number in a post is typed, but the sentences around the figures are: "about a
third", "more than four times", "v7 edges out torch.sum". When a new run moves a
figure, the figure on the page follows and the sentence does not. The ledger keeps
only the latest entry of every kernel, snippet and experiment, so the earlier values
are those of the ledger committed at REV (default HEAD): this compares it with the
ledger in the working tree, directive by directive, and lists, post by post, every
figure that moved by more than the margin (default 5%). Re-read those posts, in both
languages, before committing the run.

What a directive renders, figure by figure:

- `table` and `ladder`: every kernel's time, rate, share of the copy kernel and of
  PyTorch, speedups over NumPy and gpuarray.sum (a ladder: also its gain over the
  rung before);
- `targets`: each target's ratio;
- `experiment`: the notes under the chart, every point of every series (a timeline:
  each lane's busy time and end);
- `plot`: every point of the series;
- `output`: every number in the snippet's recorded output, line by line (an output
  whose lines changed shape is listed as such).

`device` renders no figure; notebooks carry their outputs in the page and are not
compared.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from thousand.site.render import DIRECTIVE

MARGIN = 0.05
LANGS = ("zh", "en")
# A kernel entry's figures, as the tables label them.
KERNEL_FIGURES = {
    "median_ms": "time (ms)",
    "gbps": "GB/s",
    "gflops": "GFLOP/s",
    "pct_of_copy": "% of copy",
    "pct_of_torch": "% of PyTorch",
    "speedup_vs_numpy": "x NumPy",
    "speedup_vs_pycuda": "x gpuarray.sum",
}
# A number as snippets print it: 1,000,003  -2442  9.30  5.0e-09  0.000000
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][-+]?\d+)?")


class DriftError(RuntimeError):
    """The comparison cannot be made (no git, no such revision, no ledger)."""


@dataclass(frozen=True)
class Moved:
    directive: str  # "results:experiment b5-streams"
    figure: str  # "notes: speedup"
    old: float | None  # None: not recorded at the revision
    new: float | None  # None: no longer recorded
    note: str = ""  # instead of a change in percent, what happened

    def change(self) -> float | None:
        if self.old is None or self.new is None:
            return None
        if self.old == 0:
            return math.inf if self.new else 0.0
        return (self.new - self.old) / abs(self.old)

    def line(self) -> str:
        if self.note:
            return f"{self.figure}: {self.note}"
        return f"{self.figure}: {_num(self.old)} -> {_num(self.new)} ({_pct(self)})"


def _num(x: float) -> str:
    if x == 0 or 1e-3 <= abs(x) < 1e6:
        return f"{x:,.4g}"
    return f"{x:.3g}"


def _pct(m: Moved) -> str:
    c = m.change()
    return "from 0" if c == math.inf else f"{c:+.1%}"


# -- the figures a directive renders ------------------------------------------


def _kernel_figures(k: dict, prefix: str) -> dict[str, float]:
    return {
        f"{prefix} {label}": float(k[key])
        for key, label in KERNEL_FIGURES.items()
        if isinstance(k.get(key), int | float)
    }


def _rows(ledger: dict, families: list[str]) -> list[dict]:
    rows = [k for k in ledger.get("kernels", {}).values() if k["family"] in families]
    return sorted(rows, key=lambda k: (families.index(k["family"]), k["version"]))


def _name(k: dict) -> str:
    return f"{k['family']}_v{k['version']}"


def _series_figures(result: dict) -> dict[str, float]:
    """Every point of a lines or bars result, named by its series and x."""
    out = {}
    label = result.get("x", {}).get("label", "x")
    for series, values in result.get("series", {}).items():
        for x, y in zip(result.get("x", {}).get("values", []), values, strict=False):
            if isinstance(y, int | float):  # bars: x is a category, not a quantity
                where = f"{x}" if result.get("kind") == "bars" else f"{label} = {x}"
                out[f"{series}, {where}"] = float(y)
    return out


def _timeline_figures(result: dict) -> dict[str, float]:
    out = {}
    for lane, spans in result.get("lanes", {}).items():
        if spans:
            out[f"{lane}: busy (ms)"] = sum(end - start for _, start, end in spans)
            out[f"{lane}: ends at (ms)"] = max(end for _, _, end in spans)
    return out


def _note_labels(name: str) -> dict[str, str] | None:
    """The notes the page shows under an experiment's chart, by key: English label."""
    from thousand.experiments import ExperimentError, by_name

    try:
        return {key: note.en for key, note in by_name(name).notes.items()}
    except ExperimentError:  # renamed or removed since: compare every note
        return None


def figures(ledger: dict, kind: str, args: list[str]) -> dict[str, float] | None:
    """What `<!-- results:KIND ARGS -->` renders from `ledger`, figure by figure:
    {label: value}; None if the ledger has nothing for it."""
    if kind in ("table", "ladder"):
        rows = _rows(ledger, args)
        if not rows:
            return None
        out = {}
        for prev, k in zip([None, *rows[:-1]], rows, strict=True):
            out.update(_kernel_figures(k, _name(k)))
            if kind == "ladder" and prev and prev.get("median_ms") and k["median_ms"]:
                out[f"{_name(k)} x previous"] = prev["median_ms"] / k["median_ms"]
        return out
    if kind == "targets":
        chosen = [
            t
            for t in ledger.get("targets", [])
            if not args or t["kernel"].rsplit("_v", 1)[0] in args
        ]
        return {f"{t['what']} ({t['kernel']})": t["ratio"] for t in chosen} or None
    if kind == "experiment":
        entry = ledger.get("experiments", {}).get(args[0])
        if entry is None:
            return None
        result = entry["result"]
        labels = _note_labels(args[0])
        out = {
            f"notes: {labels[key] if labels else key}": float(value)
            for key, value in result.get("notes", {}).items()
            if isinstance(value, int | float) and (labels is None or key in labels)
        }
        if result.get("kind") == "timeline":
            out.update(_timeline_figures(result))
        else:
            out.update(_series_figures(result))
        return out
    if kind == "plot":
        series = ledger.get("series", {}).get(args[0])
        if series is None:
            return None
        return {
            f"{key} at n = {p['n']}": float(v)
            for p in series
            for key, v in p.items()
            if key != "n" and isinstance(v, int | float)
        }
    return None  # device: no figures; an unknown kind fails the build elsewhere


def _output_moves(directive: str, old: str, new: str, margin: float) -> list[Moved]:
    """The numbers of two recorded outputs of one snippet, line by line."""
    a, b = old.splitlines(), new.splitlines()
    if len(a) != len(b):
        return [Moved(directive, "output", None, None, f"{len(a)} lines -> {len(b)}")]
    moved = []
    for i, (x, y) in enumerate(zip(a, b, strict=True), start=1):
        xs, ys = NUMBER.findall(x), NUMBER.findall(y)
        where = f"line {i} ({' '.join(y.split())[:60]})"
        if len(xs) != len(ys):
            moved.append(Moved(directive, where, None, None, "the line changed shape"))
            continue
        for u, v in zip(xs, ys, strict=True):
            m = Moved(directive, where, _float(u), _float(v))
            rounding = _last_digit(u, v) * (1 + 1e-9)  # 0.005 - 0.004 > 0.001 in binary
            if abs(m.change()) > margin and abs(m.new - m.old) > rounding:
                moved.append(m)
    return moved


def _float(text: str) -> float:
    return float(text.replace(",", ""))


def _last_digit(*texts: str) -> float:
    """One unit in the last printed place of the coarser of two printed numbers:
    0.005 s against 0.004 s is rounding, whatever it is in percent."""
    units = [
        10.0 ** -len(t.partition(".")[2]) if "." in t else 1.0
        for t in texts
        if "e" not in t.lower()
    ]
    return max(units, default=0.0)


# -- comparing two ledgers, page by page ---------------------------------------


def directives(markdown: str) -> list[tuple[str, list[str]]]:
    return [(m.group(1), m.group(2).split()) for m in DIRECTIVE.finditer(markdown)]


def compare(
    old: dict,
    new: dict,
    markdown: str,
    margin: float = MARGIN,
    old_output: Callable[[str], str | None] = lambda path: None,
    new_output: Callable[[str], str | None] = lambda path: None,
) -> list[Moved]:
    """The figures of one page's directives that moved by more than `margin` (a
    fraction) from ledger `old` to ledger `new`. `old_output(path)` and
    `new_output(path)` read a snippet's recorded output (the path the ledger names)."""
    moved: list[Moved] = []
    seen = set()
    for kind, args in directives(markdown):
        directive = f"results:{kind} {' '.join(args)}".rstrip()
        if directive in seen:
            continue
        seen.add(directive)
        if kind == "output":
            moved += _compare_output(
                directive, args, old, new, margin, old_output, new_output
            )
            continue
        before, after = figures(old, kind, args), figures(new, kind, args)
        if after is None:
            continue  # nothing recorded now: the strict build says so
        if before is None:
            moved.append(Moved(directive, "all", None, None, "newly recorded"))
            continue
        for label, value in after.items():
            if label not in before:
                moved.append(Moved(directive, label, None, value, "newly recorded"))
                continue
            m = Moved(directive, label, before[label], value)
            if abs(m.change()) > margin:
                moved.append(m)
        for label in before.keys() - after.keys():
            moved.append(
                Moved(directive, label, before[label], None, "no longer recorded")
            )
    return moved


def _compare_output(directive, args, old, new, margin, old_output, new_output):
    stem = args[0] if args else ""
    before = old.get("snippets", {}).get(f"{stem}.py")
    after = new.get("snippets", {}).get(f"{stem}.py")
    if after is None:
        return []
    if before is None:
        return [Moved(directive, "output", None, None, "newly recorded")]
    if before.get("output_sha256") and before.get("output_sha256") == after.get(
        "output_sha256"
    ):
        return []
    a, b = old_output(before["output"]), new_output(after["output"])
    if a is None or b is None:
        return [Moved(directive, "output", None, None, "changed (text not found)")]
    return _output_moves(directive, a, b, margin)


# -- the repository: the working tree against a revision -----------------------


def _git_show(root: Path, rev: str, path: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "show", f"{rev}:{path}"],
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError as e:
        raise DriftError("git is not installed") from e
    return done.stdout if done.returncode == 0 else None


def _check_revision(root: Path, rev: str) -> None:
    done = subprocess.run(
        [
            "git",
            "-C",
            str(root),
            "rev-parse",
            "--verify",
            "--quiet",
            f"{rev}^{{commit}}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise DriftError(f"{rev!r} is not a revision of the repository at {root}")


def pages(root: Path) -> dict[str, dict[str, str]]:
    """Every page with a results directive: {path under docs/<lang>/: {lang: text}}."""
    found: dict[str, dict[str, str]] = {}
    for lang in LANGS:
        base = root / "docs" / lang
        for p in sorted(base.rglob("*.md")):
            text = p.read_text(encoding="utf-8")
            if DIRECTIVE.search(text):
                found.setdefault(p.relative_to(base).as_posix(), {})[lang] = text
    return dict(sorted(found.items()))


def drift(
    root: Path, slug: str, rev: str = "HEAD", margin: float = MARGIN
) -> tuple[dict[str, list[Moved]], dict[str, list[str]]]:
    """{page: figures that moved}, and {page: its languages}, for every page whose
    figures moved between the ledger `slug` at `rev` and the one in the working
    tree under `root`."""
    _check_revision(root, rev)
    path = f"docs/assets/results/{slug}.json"
    current = root / path
    if not current.is_file():
        raise DriftError(f"no ledger {path} in the working tree")
    from thousand.bench import ledger as L

    new = L.upgrade(json.loads(current.read_text()))
    text = _git_show(root, rev, path)
    if text is None:
        raise DriftError(f"{path} is not in {rev}: nothing to compare with")
    old = L.upgrade(json.loads(text))

    def new_output(p: str) -> str | None:
        f = root / p
        return f.read_text(encoding="utf-8") if f.is_file() else None

    moved, langs = {}, {}
    for page, texts in pages(root).items():
        found: list[Moved] = []
        keys = set()
        for text in texts.values():  # both languages: the same directives, once
            for m in compare(
                old, new, text, margin, lambda p: _git_show(root, rev, p), new_output
            ):
                if (m.directive, m.figure) not in keys:
                    keys.add((m.directive, m.figure))
                    found.append(m)
        if found:
            moved[page] = found
            langs[page] = sorted(texts, key=LANGS.index)
    return moved, langs


def report(
    moved: dict[str, list[Moved]], langs: dict[str, list[str]], rev: str, margin: float
) -> str:
    if not moved:
        return f"No figure on any post moved by more than {margin:.0%} since {rev}.\n"
    out = [
        f"Figures that moved by more than {margin:.0%} since {rev}; re-read these "
        f"posts, in every language listed, before committing the run:",
    ]
    for page, found in moved.items():
        out.append("")
        out.append(f"{page} ({', '.join(langs[page])}): {len(found)} figures")
        by_directive: dict[str, list[Moved]] = {}
        for m in found:
            by_directive.setdefault(m.directive, []).append(m)
        for directive, ms in by_directive.items():
            out.append(f"  {directive}")
            ms.sort(key=lambda m: -abs(m.change() or 0) if not m.note else 0)
            out += [f"    {m.line()}" for m in ms]
    n = len(moved)
    out += ["", f"{n} post{'s' if n != 1 else ''} to re-read."]
    return "\n".join(out) + "\n"
