"""The pages' sources, read before MkDocs starts, for what would stop it with a
Python traceback from deep inside (a post's front matter that is not YAML, a file
that is not UTF-8, an include of a snippet section that does not exist) or what a
strict build would let through (two posts with one slug, one page written over the
other). Each problem is named by file and line, in one sentence."""

from __future__ import annotations

import re
from pathlib import Path

LANGS = ("zh", "en")
# MkDocs's and Material's blog's own test for front matter (mkdocs.utils.meta).
_FRONT = re.compile(r"^-{3}[ \t]*\n(.*?\n)(?:\.{3}|-{3})[ \t]*\n", re.DOTALL)
# An include's target: a path, then a section (:name) or line ranges (:1:5,9:),
# as pymdownx.snippets splits it.
_TARGET = re.compile(
    r"(?P<path>.+?)"
    r"(?::(?P<section>[A-Za-z][-_0-9A-Za-z]*)|(?::-?\d*){1,2}(?:,-?\d*(?::-?\d*)?)*)?"
)


class SourceError(ValueError):
    """A page MkDocs cannot build as it is; nothing was built."""


def check(root: Path) -> None:
    """Raise SourceError naming the first problem in the pages of docs/zh and
    docs/en under `root` (and how many more there are)."""
    problems = problems_in(root)
    if problems:
        more = len(problems) - 1
        also = f" (and {more} more problem{'s' * (more > 1)})" if more else ""
        raise SourceError(problems[0] + also)


def problems_in(root: Path) -> list[str]:
    problems: list[str] = []
    sections: dict[Path, set[str] | str] = {}  # an included file's sections
    for lang in LANGS:
        docs = root / "docs" / lang
        slugs: dict[str, str] = {}
        points: dict[str, str] = {}  # a point of docs/tracks.yml -> its post
        for page in sorted(docs.rglob("*.md")):
            rel = page.relative_to(root).as_posix()
            try:
                text = read(page, rel)
                meta = front_matter(text, rel)
            except SourceError as e:
                problems.append(str(e))
                continue
            problems += includes(text, rel, root, sections)
            post = page.relative_to(docs).parts[:2] == ("blog", "posts")
            slug = meta.get("slug")
            if post and isinstance(slug, str) and not meta.get("draft"):
                if slug in slugs:
                    problems.append(
                        f"{slugs[slug]} and {rel} are both posts with the slug "
                        f"'{slug}', so one page would replace the other: give one "
                        f"of them another slug"
                    )
                else:
                    slugs[slug] = rel
            point = meta.get("point")
            if post and isinstance(point, str):
                if point in points:
                    problems.append(
                        f"{points[point]} and {rel} are both posts of point "
                        f"{point}: a point has one post in each language"
                    )
                else:
                    points[point] = rel
    return problems


def read(path: Path, rel: str) -> str:
    """`path` as UTF-8 text; SourceError naming the line of the first byte that
    is not."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise SourceError(
            f"{rel}:{line}: not UTF-8 (byte 0x{data[e.start]:02x} at offset "
            f"{e.start}): save the file as UTF-8"
        ) from None


def front_matter(text: str, rel: str) -> dict:
    """The page's front matter (empty without one); SourceError naming the line
    where its YAML breaks."""
    import yaml  # the docs extra

    found = _FRONT.match(text)
    if not found:
        return {}
    try:
        meta = yaml.safe_load(found.group(1))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        where = f":{mark.line + 2}" if mark else ""  # +1: the opening ---
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise SourceError(
            f"{rel}{where}: the front matter is not valid YAML ({problem}); fix "
            f"it between the two --- lines"
        ) from None
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise SourceError(
            f"{rel}:2: the front matter is YAML but not a list of keys and values "
            f"(key: value, one a line)"
        )
    return meta


def includes(text: str, rel: str, root: Path, sections: dict) -> list[str]:
    """Each `--8<-- "path:section"` on the page whose file or section is missing
    (paths are relative to `root`, as mkdocs.yml's base_path)."""
    from pymdownx.snippets import SnippetPreprocessor  # the docs extra

    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        found = SnippetPreprocessor.RE_ALL_SNIPPETS.match(line)
        if not found or found.group("escape") or not found.group("inline_marker"):
            continue
        target = found.group("snippet")[1:-1].strip()
        if target.startswith(";") or target.lower().startswith(("http:", "https:")):
            continue
        parts = _TARGET.fullmatch(target)
        if parts is None:
            continue
        path, section = parts.group("path"), parts.group("section")
        where = f'{rel}:{number}: the include --8<-- "{target}"'
        file = root / path
        if not file.is_file():
            problems.append(f"{where} names {path}, which does not exist")
            continue
        if section is None:
            continue
        if file not in sections:
            sections[file] = _sections(file, path)
        found_in = sections[file]
        if isinstance(found_in, str):  # the included file cannot be read
            problems.append(f"{where}: {found_in}")
        elif section.lower() not in found_in:
            known = ", ".join(sorted(found_in)[:8]) or "none"
            problems.append(
                f"{where} names the section '{section}', which {path} does not "
                f"mark with --8<-- [start:{section}] (its sections: {known})"
            )
    return problems


def _sections(file: Path, rel: str) -> set[str] | str:
    """The sections `file` marks (lower case), or why it cannot be read."""
    try:
        text = read(file, rel)
    except SourceError as e:
        return str(e)
    from pymdownx.snippets import SnippetPreprocessor

    names = set()
    for line in text.splitlines():
        found = SnippetPreprocessor.RE_SNIPPET_SECTION.match(line)
        if found and not found.group("escape") and found.group("type") == "start":
            names.add(found.group("name").lower())
    return names
