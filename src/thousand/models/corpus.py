"""A15/A16's text corpus: the site's own posts, Chinese and English, as paragraphs.

The posts change as the site grows, and every figure a GPU run records (losses,
tokens per character) depends on the exact text, so the corpus is a snapshot frozen
into the package: snapshot/posts.json, written once by

    python -m thousand.models.corpus freeze [--force]

which records the commit it read. Everything else reads the snapshot, never the
posts. A paragraph is a run of markdown lines between blank lines, kept as written
(inline markdown, formulas and tables stay; headings lose their #'s) once what a
reader never sees as text is gone: code fences with their code, snippet includes,
HTML comments, images, admonition markers (their title stays).

Splits are fixed by position: paragraph i of the snapshot is validation when
i % 10 == 0, training otherwise; each post, language and track is spread over both.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from functools import cache
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]  # the checkout (freeze only)
POSTS = {lang: ROOT / "docs" / lang / "blog" / "posts" for lang in ("zh", "en")}
SNAPSHOT = "snapshot/posts.json"  # inside this package
MADE_BY = "python -m thousand.models.corpus freeze"
EOT = "<|endoftext|>"  # between paragraphs in text(); the tokenizer's special id 0
MIN_CHARS = 20  # shorter paragraphs are headings like "## The idea", or debris
SPLITS = ("train", "val")
VAL_EVERY = 10  # paragraph i is validation when i % VAL_EVERY == 0

_FENCE = re.compile(r"\s*(`{3,}|~{3,})")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_IMAGE = re.compile(r"\s*!\[[^\]]*\]\([^)]*\)(\{[^}]*\})?\s*$")
_ADMONITION = re.compile(r'(?:!!!|\?\?\?\+?)\s+[\w-]+(?:\s+[\w-]+)*\s*(?:"(.*)")?\s*$')
_HEADING = re.compile(r"#{1,6}\s+")
_POINT = re.compile(r"point:\s*([AB])(\d+)\s*$")


def split_front_matter(markdown: str) -> tuple[list[str], list[str]]:
    """(front-matter lines, body lines): the front matter is the YAML between the
    first two lines that are exactly ---."""
    lines = markdown.splitlines()
    if not lines or lines[0].strip() != "---":
        return [], lines
    end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    return lines[1:end], lines[end + 1 :]


def track_of(front: list[str]) -> str | None:
    """The track letter of the post's `point:` (A4 -> "A"), None if it names none."""
    for line in front:
        if m := _POINT.match(line.strip()):
            return m.group(1)
    return None


def _visible_lines(body: list[str]) -> list[str]:
    """The body with what a reader does not see as prose replaced by blank lines
    (a dropped block also ends the paragraph before it)."""
    out: list[str] = []
    fence = None  # the opening run of backticks or tildes while inside a fence
    snippet_block = False  # inside a multi-line --8<-- block
    admonition = False  # inside an admonition's indented body
    for line in body:
        if fence:
            s = line.strip()
            if s and set(s) == {fence[0]} and len(s) >= len(fence):
                fence = None
            out.append("")
            continue
        if m := _FENCE.match(line):
            fence = m.group(1)
            out.append("")
            continue
        if line.strip() == "--8<--":  # the block form: file names until the next
            snippet_block = not snippet_block
            out.append("")
            continue
        if snippet_block or line.lstrip().startswith("--8<--") or _IMAGE.match(line):
            out.append("")
            continue
        if m := _ADMONITION.match(line):
            admonition = True
            out.append(m.group(1) or "")  # the title, when it has one
            continue
        if admonition:
            if line.startswith("    "):
                line = line[4:]
            elif line.strip():
                admonition = False
        out.append(line.rstrip())
    return out


def paragraphs_of(markdown: str) -> list[str]:
    """The prose paragraphs of one post's markdown, in order."""
    _, body = split_front_matter(markdown)
    text = _COMMENT.sub("", "\n".join(_visible_lines(body)))
    paras = []
    for block in re.split(r"\n\s*\n", text):
        lines = [_HEADING.sub("", x, count=1) for x in block.strip().splitlines()]
        para = "\n".join(lines).strip()
        if len(para) >= MIN_CHARS:
            paras.append(para)
    return paras


def read_posts(posts: dict[str, Path] = POSTS) -> list[dict]:
    """Every paragraph of every post: zh posts by file name, then en."""
    out = []
    for lang in ("zh", "en"):
        for path in sorted(posts[lang].glob("*.md")):
            markdown = path.read_text(encoding="utf-8")
            track = track_of(split_front_matter(markdown)[0])
            if track is None:
                # A post outside both tracks (none today: cuda-on-cpu.md is B17 in
                # its front matter and in docs/tracks.yml) has no track to label.
                print(f"skipped {path.name} ({lang}): no point", file=sys.stderr)
                continue
            for text in paragraphs_of(markdown):
                out.append(
                    {"post": path.stem, "lang": lang, "track": track, "text": text}
                )
    return out


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()


def dumps(snapshot: dict) -> str:
    """The snapshot as JSON with one paragraph per line (readable git diffs)."""
    head = {k: v for k, v in snapshot.items() if k != "paragraphs"}
    lines = ["{" + json.dumps(head, ensure_ascii=False)[1:-1] + ', "paragraphs": [']
    rows = [json.dumps(p, ensure_ascii=False) for p in snapshot["paragraphs"]]
    lines += [row + ("," if i < len(rows) - 1 else "") for i, row in enumerate(rows)]
    return "\n".join(lines + ["]}", ""])


def snapshot_path() -> Path:
    """Where freeze writes: the package's own file in this checkout."""
    return Path(__file__).resolve().parent / SNAPSHOT


def freeze(out: Path | None = None, force: bool = False) -> dict:
    """Read the posts and write the snapshot; refuse to replace one without force
    (figures recorded on a GPU depend on it) or to record a commit whose posts
    differ from the files read."""
    out = out or snapshot_path()
    if out.exists() and not force:
        raise FileExistsError(
            f"{out} exists and GPU figures depend on it; pass --force to replace it"
        )
    dirty = _git("status", "--porcelain", "--", *(str(p) for p in POSTS.values()))
    if dirty:
        raise RuntimeError(
            "the posts differ from the commit, so it would not name what was read; "
            f"commit them first:\n{dirty}"
        )
    snapshot = {"commit": _git("rev-parse", "HEAD"), "made_by": MADE_BY}
    snapshot["paragraphs"] = read_posts()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(dumps(snapshot), encoding="utf-8")
    return snapshot


def counts(snapshot: dict) -> dict[str, dict[str, int]]:
    """Paragraphs and characters per language."""
    out = {}
    for lang in ("zh", "en"):
        texts = [p["text"] for p in snapshot["paragraphs"] if p["lang"] == lang]
        out[lang] = {"paragraphs": len(texts), "characters": sum(map(len, texts))}
    return out


@cache
def load() -> dict:
    """The shipped snapshot (read once): commit, made_by, paragraphs."""
    with resources.files(__package__).joinpath(SNAPSHOT).open(encoding="utf-8") as f:
        return json.load(f)


def split(name: str) -> list[int]:
    """The snapshot indices of split "train" or "val" (val: i % 10 == 0)."""
    if name not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, not {name!r}")
    n = len(load()["paragraphs"])
    return [i for i in range(n) if (i % VAL_EVERY == 0) == (name == "val")]


def paragraphs(split_name: str, lang: str | None = None) -> list[str]:
    """The texts of a split, in snapshot order, of one language or both."""
    if lang not in (None, "zh", "en"):
        raise ValueError(f"lang must be 'zh', 'en' or None, not {lang!r}")
    rows = load()["paragraphs"]
    return [
        rows[i]["text"]
        for i in split(split_name)
        if lang is None or rows[i]["lang"] == lang
    ]


def text(split_name: str) -> str:
    """A split as one string, paragraphs joined by the end-of-text token."""
    return EOT.join(paragraphs(split_name))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m thousand.models.corpus", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    freeze_p = sub.add_parser("freeze", help="write snapshot/posts.json from the posts")
    freeze_p.add_argument("--force", action="store_true", help="replace the snapshot")
    args = parser.parse_args(argv)
    try:
        snapshot = freeze(force=args.force)
    except (FileExistsError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {snapshot_path()} from {snapshot['commit']}")
    for lang, c in counts(snapshot).items():
        print(f"{lang}: {c['paragraphs']} paragraphs, {c['characters']} characters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
