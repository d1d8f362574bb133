"""The learning paths: docs/tracks.yml in reading order, against the posts written.

A track page asks for its list with a directive on a line of its own:

    <!-- track:B -->

Every point of the track becomes one numbered line: a link to its post where a post
names the point in its front matter (`point: B1`), otherwise the title marked as not
written yet, with no link (a reader never lands on a missing page).
"""

from __future__ import annotations

import html
import posixpath
import re
from functools import cache
from pathlib import Path

import yaml

from thousand.bench.ledger import ROOT
from thousand.site import plaintex

TRACKS_FILE = ROOT / "docs" / "tracks.yml"
DIRECTIVE = re.compile(r"^<!-- track:(\w+) -->$", re.M)
FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)

TEXT = {
    "zh": {
        "progress": "已写成 {done} / {total} 个知识点。",
        "unwritten": "尚未写成",
        "point": "知识点",
        "next": "下一个知识点",
        "next_written": "这条路线上下一篇已写成的",
        "last": "这是这条路线的最后一个知识点。",
        "prev": "上一个知识点",
        "prev_written": "这条路线上前一篇已写成的",
        "first": "这是这条路线的第一个知识点。",
        "colon": "：",
        "sep": "；",
        "unwritten_note": "（尚未写成）",
        "start": "从这里开始",
        "minutes": "约 {n} 分钟",
    },
    "en": {
        "progress": "{done} of {total} points written so far.",
        "unwritten": "not written yet",
        "point": "Point",
        "next": "Next point",
        "next_written": "the next one written on this track",
        "last": "This is the last point of its track.",
        "prev": "Previous point",
        "prev_written": "the previous one written on this track",
        "first": "This is the first point of its track.",
        "colon": ": ",
        "sep": "; ",
        "unwritten_note": " (not written yet)",
        "start": "Start here",
        "minutes": "{n} min read",
    },
}
TRACK_PAGES = {"A": "tracks/neural-networks.md", "B": "tracks/cuda.md"}


class TrackError(ValueError):
    pass


@cache
def tracks() -> dict:
    return yaml.safe_load(TRACKS_FILE.read_text(encoding="utf-8"))


def point_ids() -> set[str]:
    return {p["id"] for t in tracks().values() for p in t["points"]}


def front_matter(path: Path) -> dict:
    """A post's front matter (read-only: it is shared). Every post asks for every
    other post's (its track's links), so each file is parsed once until it changes."""
    stat = path.stat()
    return _front_matter(path, stat.st_mtime_ns, stat.st_size)


@cache
def _front_matter(path: Path, mtime_ns: int, size: int) -> dict:
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
        out[point] = {
            "uri": uri,
            "date": meta.get("date"),
            "slug": meta.get("slug"),
            "description": meta.get("description") or "",
        }
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
    first = next((p["id"] for p in points if p["id"] in done), None)
    for p in points:
        title = p[lang]
        post = done.get(p["id"])
        if post:
            link = posixpath.relpath(post["uri"], here)
            start = (
                f' <strong class="tp-start">{t["start"]}</strong>'
                if p["id"] == first
                else ""
            )
            # the reading time is counted when the post is converted, after this
            # page's Markdown: a stand-in, filled in by fill_reading_times
            lines.append(
                f"1. **{p['id']}** · [{title}]({link}){start} "
                f'<small class="tp-time" data-point="{p["id"]}"></small>'
            )
            summary = html.escape(plaintex.inline(post["description"]), quote=False)
            if summary:
                lines.append(f'   <br><span class="tp-summary">{summary}</span>')
        else:
            lines.append(
                f'1. **{p["id"]}** · <span class="tp-unwritten">{title}</span> '
                f"<small>({t['unwritten']})</small>"
            )
    return "\n".join(lines) + "\n"


_TIME = re.compile(r'<small class="tp-time" data-point="(\w+)"></small>')


def fill_reading_times(output: str, minutes: dict[str, int], lang: str) -> str:
    """A built track page with each written point's reading time (`minutes`: point
    id -> minutes, as the post shows it)."""

    def one(m: re.Match) -> str:
        n = minutes.get(m.group(1))
        if n is None:  # a partial rebuild that converted no post: no time shown
            return ""
        text = TEXT[lang]["minutes"].format(n=n)
        return f'<small class="tp-time" data-point="{m.group(1)}">· {text}</small>'

    return _TIME.sub(one, output)


def render_page(markdown: str, page_uri: str, lang: str, docs_dir: Path) -> str:
    return DIRECTIVE.sub(
        lambda m: render(m.group(1), lang, page_uri, docs_dir), markdown
    )


def _track_of(point: str) -> tuple[str, int]:
    for name, t in tracks().items():
        for i, p in enumerate(t["points"]):
            if p["id"] == point:
                return name, i
    raise TrackError(f"point {point!r} is not in {TRACKS_FILE.name}")


def post_links(markdown: str, point, page_uri: str, lang: str, docs_dir: Path) -> str:
    """A post names its point under its title (with its track, linked) and ends
    with the next point: linked when written, else named, with the next written
    one after it. Pages without `point:` are returned as they are."""
    if point is None:
        return markdown
    name, i = _track_of(point)
    t, points, done = TEXT[lang], tracks()[name]["points"], written(docs_dir)
    here = posixpath.dirname(page_uri) or "."

    def link(p) -> str:
        target = posixpath.relpath(done[p["id"]]["uri"], here)
        return f"[{p['id']} · {p[lang]}]({target})"

    track_page = posixpath.relpath(TRACK_PAGES[name], here)
    badge = f'<p class="tp-point" markdown>{t["point"]} **{point}** · '
    badge += f"[{tracks()[name][lang]}]({track_page})</p>"
    title = re.search(r"^# .*$", markdown, re.M)
    if title is None:
        raise TrackError(f"{page_uri}: a post needs a '# ' title")
    markdown = markdown[: title.end()] + "\n\n" + badge + markdown[title.end() :]

    colon, sep = t["colon"], t["sep"]

    def step(nearer: list, word: str, written_word: str, none: str) -> str:
        """The point one step along (`nearer`: the points that way, nearest
        first): linked when written, else named, with the nearest written one."""
        if not nearer:
            return t[none]
        if nearer[0]["id"] in done:
            return f"{t[word]}{colon}{link(nearer[0])}"
        p = nearer[0]
        out = f"{t[word]}{colon}{p['id']} · {p[lang]}{t['unwritten_note']}"
        written_there = [q for q in nearer if q["id"] in done]
        if written_there:
            out += f"{sep}{t[written_word]}{colon}{link(written_there[0])}"
        return out

    before = step(points[:i][::-1], "prev", "prev_written", "first")
    after = step(points[i + 1 :], "next", "next_written", "last")
    return markdown.rstrip("\n") + (
        f'\n\n<p class="tp-prev" markdown>{before}</p>\n'
        f'<p class="tp-next" markdown>{after}</p>\n'
    )


def neighbours(point: str, docs_dir: Path) -> tuple[str | None, str | None]:
    """The URLs (from the site's root) of the written posts before and after
    `point` on its track, in the track's order; None at either end."""
    name, i = _track_of(point)
    points, done = tracks()[name]["points"], written(docs_dir)

    def url(candidates) -> str | None:
        for p in candidates:
            if p["id"] in done:
                return f"blog/{done[p['id']]['slug']}/"
        return None

    return url(points[:i][::-1]), url(points[i + 1 :])


_HEAD_LINK = re.compile(r'\s*<link rel="(prev|next)" href="[^"]*">')


def head_links(output: str, point, page_url: str, docs_dir: Path) -> str:
    """A built post's <link rel="prev"> and <link rel="next"> along its track
    (the blog plugin links posts by date: B2's next was A1); none at a track's
    end."""
    if point is None:
        return output
    before, after = neighbours(point, docs_dir)
    here = page_url if page_url.endswith("/") else posixpath.dirname(page_url) + "/"
    links = "".join(
        f'\n    <link rel="{rel}" href="{posixpath.relpath(url, here)}/">'
        for rel, url in (("prev", before), ("next", after))
        if url is not None
    )
    output = _HEAD_LINK.sub("", output)
    head = re.search(r"<link rel=\"canonical\"[^>]*>|<meta charset=[^>]*>", output)
    if head is None:
        raise TrackError(f"{page_url}: no <head> to put the track's links in")
    return output[: head.end()] + links + output[head.end() :]
