"""The learning paths: docs/tracks.yml in reading order, against the posts written.

A track page asks for its list with a directive on a line of its own:

    <!-- track:B -->

Every point of the track becomes one numbered line: a link to its post where a post
names the point in its front matter (`point: B1`), otherwise the title marked as not
written yet, with no link (a reader never lands on a missing page).
"""

from __future__ import annotations

import posixpath
import re
from functools import cache
from pathlib import Path

import yaml

from thousand.bench.ledger import ROOT

TRACKS_FILE = ROOT / "docs" / "tracks.yml"
DIRECTIVE = re.compile(r"^<!-- track:(\w+) -->$", re.M)
FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)

TEXT = {
    "zh": {
        "progress": "已写成 {done} / {total} 个知识点。",
        "unwritten": "尚未写成",
    },
    "en": {
        "progress": "{done} of {total} points written so far.",
        "unwritten": "not written yet",
    },
}


class TrackError(ValueError):
    pass


@cache
def tracks() -> dict:
    return yaml.safe_load(TRACKS_FILE.read_text(encoding="utf-8"))


def point_ids() -> set[str]:
    return {p["id"] for t in tracks().values() for p in t["points"]}


def front_matter(path: Path) -> dict:
    m = FRONT_MATTER.match(path.read_text(encoding="utf-8"))
    return yaml.safe_load(m.group(1)) if m else {}


def written(docs_dir: Path) -> dict[str, dict]:
    """point id -> {"uri": the post's path under docs_dir, "date": ...}."""
    out: dict[str, dict] = {}
    for post in sorted((docs_dir / "blog" / "posts").glob("*.md")):
        meta = front_matter(post)
        point = meta.get("point")
        if point is None:
            continue
        if point not in point_ids():
            raise TrackError(f"{post}: point {point!r} is not in {TRACKS_FILE.name}")
        if point in out:
            raise TrackError(f"{post}: point {point} already has {out[point]['uri']}")
        uri = post.relative_to(docs_dir).as_posix()
        out[point] = {"uri": uri, "date": meta.get("date")}
    return out


def render(track: str, lang: str, page_uri: str, docs_dir: Path) -> str:
    if track not in tracks():
        raise TrackError(f"{page_uri}: no track {track!r} in {TRACKS_FILE.name}")
    t, points = TEXT[lang], tracks()[track]["points"]
    done = written(docs_dir)
    here = posixpath.dirname(page_uri) or "."
    lines = [
        t["progress"].format(
            done=sum(p["id"] in done for p in points), total=len(points)
        ),
        "",
    ]
    for p in points:
        title = p[lang]
        post = done.get(p["id"])
        if post:
            link = posixpath.relpath(post["uri"], here)
            lines.append(f"1. **{p['id']}** · [{title}]({link})")
        else:
            lines.append(
                f'1. **{p["id"]}** · <span class="tp-unwritten">{title}</span> '
                f"<small>({t['unwritten']})</small>"
            )
    return "\n".join(lines) + "\n"


def render_page(markdown: str, page_uri: str, lang: str, docs_dir: Path) -> str:
    return DIRECTIVE.sub(
        lambda m: render(m.group(1), lang, page_uri, docs_dir), markdown
    )
