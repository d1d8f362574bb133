"""The glossary: docs/glossary.yml rendered where a page says <!-- glossary -->, and
the check that holds the Chinese pages to it.

One Chinese spelling per term, and for each the spellings to avoid. `deviations`
finds those spellings in the Chinese pages, in what they include and in the site's
own Chinese; the MkDocs hooks fail the Chinese build on any (`check`), and
tests/cpu/test_glossary.py calls the same functions. The header of
docs/glossary.yml says what is checked and how `except` works.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from thousand.bench.ledger import ROOT

GLOSSARY_FILE = ROOT / "docs" / "glossary.yml"
DIRECTIVE = re.compile(r"^<!-- glossary -->$", re.M)
ZH_DOCS = ROOT / "docs" / "zh"
# The site's own Chinese: captions and headings its directives write on the pages.
SITE_SOURCES = ROOT / "src" / "thousand" / "site"
PAGE_SUFFIXES = {".md", ".ipynb"}
# pymdownx.snippets: a line `--8<-- "path"` or `--8<-- "path:section"` (a line
# written `;--8<--` is escaped, shown and not included); paths from the repository
# root (mkdocs.yml: base_path).
_INCLUDE = re.compile(r'^\s*-{1,}8<-{1,}\s+"([^"]+)"\s*$')
_SECTION_MARK = re.compile(r"-{1,}8<-{1,}\s+\[(start|end):([^\]]+)\]")

TEXT = {
    "zh": {
        "sections": {"gpu": "GPU 与 CUDA", "networks": "神经网络", "project": "本站"},
        "head": "| 中文 | English | 不用的写法 |\n|---|---|---|",
    },
    "en": {
        "sections": {
            "gpu": "GPUs and CUDA",
            "networks": "Neural networks",
            "project": "This site",
        },
        "head": "| English | Chinese | not used |\n|---|---|---|",
    },
}


@cache
def entries() -> dict[str, list[dict]]:
    return yaml.safe_load(GLOSSARY_FILE.read_text(encoding="utf-8"))


def _row(entry: dict, lang: str) -> str:
    note = entry.get("note", {}).get(lang)
    zh = entry["zh"] + (f"（{note}）" if note and lang == "zh" else "")
    en = entry["en"] + (f" ({note})" if note and lang == "en" else "")
    avoid = "、".join(entry.get("avoid", [])) or "–"
    cells = [zh, en] if lang == "zh" else [en, zh]
    return "| " + " | ".join([*cells, avoid]) + " |"


def render(lang: str) -> str:
    t = TEXT[lang]
    parts = []
    for section, items in entries().items():
        rows = "\n".join(_row(e, lang) for e in items)
        parts.append(f"## {t['sections'][section]}\n\n{t['head']}\n{rows}\n")
    return "\n".join(parts)


def render_page(markdown: str, lang: str) -> str:
    if not DIRECTIVE.search(markdown):
        return markdown
    return DIRECTIVE.sub(lambda m: render(lang), markdown)


@dataclass(frozen=True)
class Deviation:
    """A spelling the glossary avoids, found at `path`:`line`."""

    path: str  # from the repository root where it lies inside it
    line: int
    variant: str
    term: str  # the glossary's Chinese spelling
    en: str
    included_by: str = ""  # "docs/zh/...md:LINE" for a file a page includes

    def __str__(self) -> str:
        via = f" (included by {self.included_by})" if self.included_by else ""
        return (
            f"{self.path}:{self.line}{via}: {self.variant} is a spelling the "
            f"glossary avoids; write {self.term} ({self.en})"
        )


class GlossaryError(Exception):
    """Chinese text uses spellings that docs/glossary.yml avoids."""


@cache
def _rules() -> tuple[tuple[str, dict, tuple[str, ...]], ...]:
    """(variant, entry, the entry's `except` strings that contain the variant),
    longest variant first."""
    rules = []
    for items in entries().values():
        for e in items:
            for v in e.get("avoid", []):
                keep = tuple(x for x in e.get("except", []) if v in x)
                rules.append((v, e, keep))
    return tuple(sorted(rules, key=lambda r: -len(r[0])))


def _excepted(text: str, at: int, variant: str, keep: tuple[str, ...]) -> bool:
    """Whether the occurrence of `variant` at `at` lies inside one of `keep`."""
    for x in keep:
        k = x.find(variant)
        while k >= 0:
            if text[at - k : at - k + len(x)] == x:
                return True
            k = x.find(variant, k + 1)
    return False


def find(text: str) -> list[tuple[int, str, dict]]:
    """(line, variant, entry) for each spelling in `text` that the glossary
    avoids, in order; a variant that lies inside a longer variant found at
    the same place is reported once, as the longer."""
    spans = []
    for variant, entry, keep in _rules():
        at = text.find(variant)
        while at >= 0:
            end = at + len(variant)
            covered = any(a <= at and end <= b for a, b, *_ in spans)
            if not covered and not _excepted(text, at, variant, keep):
                spans.append((at, end, variant, entry))
            at = text.find(variant, at + 1)
    spans.sort(key=lambda s: s[0])
    return [(text.count("\n", 0, at) + 1, v, e) for at, _, v, e in spans]


def _name(path: Path) -> str:
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return path.as_posix()


def _deviations_in(path: Path, text: str, first_line: int = 1, via: str = ""):
    return [
        Deviation(_name(path), first_line + line - 1, v, e["zh"], e["en"], via)
        for line, v, e in find(text)
    ]


def _included(spec: str, root: Path) -> tuple[Path, str, int] | None:
    """The file a --8<-- line includes, the text it shows, and that text's first
    line in the file; None for a missing file (the snippets extension fails the
    build on that itself)."""
    name, _, section = spec.partition(":")
    path = root / name
    if not path.is_file():
        return None
    lines = path.read_text(encoding="utf-8").splitlines()
    if not section or section[0].isdigit():  # a whole file (or a line range)
        return path, "\n".join(lines), 1
    inside, first, shown = False, 1, []
    for number, line in enumerate(lines, 1):
        mark = _SECTION_MARK.search(line)
        if mark and mark.group(2) == section:
            inside = mark.group(1) == "start"
            if inside and not shown:
                first = number + 1
            continue
        if inside:
            shown.append(line)
    return path, "\n".join(shown), first


def _includes(page: Path, text: str, root: Path):
    seen = set()
    for number, line in enumerate(text.splitlines(), 1):
        m = _INCLUDE.match(line)
        if not m or m.group(1) in seen:
            continue
        seen.add(m.group(1))
        found = _included(m.group(1), root)
        if found:
            yield (*found, f"{_name(page)}:{number}")


def deviations(docs_dir: Path = ZH_DOCS, root: Path = ROOT) -> list[Deviation]:
    """Every spelling the glossary avoids in the Chinese pages under `docs_dir`
    (whole source: front matter, prose, code blocks; a notebook as its file), in
    the files and sections they include, in the site's own Chinese
    (src/thousand/site/*.py), in the points' titles (docs/tracks.yml) and in the
    glossary's Chinese notes."""
    found: list[Deviation] = []
    included: set[tuple[Path, str]] = set()
    for page in sorted(Path(docs_dir).rglob("*")):
        if page.suffix not in PAGE_SUFFIXES or not page.is_file():
            continue
        text = page.read_text(encoding="utf-8")
        found += _deviations_in(page, text)
        for path, shown, first, via in _includes(page, text, root):
            if (path, shown) not in included:  # once, for the first page
                included.add((path, shown))
                found += _deviations_in(path, shown, first, via)
    for source in sorted(SITE_SOURCES.glob("*.py")):
        found += _deviations_in(source, source.read_text(encoding="utf-8"))
    tracks = Path(root) / "docs" / "tracks.yml"  # the track pages' point titles
    if tracks.is_file():
        found += _deviations_in(tracks, tracks.read_text(encoding="utf-8"))
    lines = GLOSSARY_FILE.read_text(encoding="utf-8").splitlines()
    for items in entries().values():
        for e in items:
            note = e.get("note", {}).get("zh", "")
            at = next((i for i, t in enumerate(lines, 1) if note and note in t), 0)
            found += _deviations_in(GLOSSARY_FILE, note, at or 1)
    return found


def check(docs_dir: Path = ZH_DOCS, root: Path = ROOT) -> None:
    """Raise GlossaryError naming every deviation (`deviations`)."""
    found = deviations(docs_dir, root)
    if found:
        raise GlossaryError(
            f"{len(found)} Chinese spelling(s) that docs/glossary.yml avoids:\n"
            + "\n".join(f"  {d}" for d in found)
        )
