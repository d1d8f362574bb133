"""Chinese search: mend how Material's search worker cuts a query into words.

jieba splits the pages into words when the site is built (mkdocs.yml: search). A
query is cut in the browser instead: Material's worker (segment() in
integrations/search/query/segment) looks up every slice of the query in the index
and keeps the longest words it finds, but its inner loop stops one character short
(`j < query.length`), so a slice that ends at the query's last character is never
looked up. "张量核心" became "张量* 核*", and "核*" matched the heading 核心思想 that
every post has, so the MLP post ranked above matrix multiplication; "核函数" was
searched as "核*". After each build the worker in the site gets the bound
`j <= query.length`. A Material release that changes the loop fails the build here,
so the mend is looked at again rather than silently lost.
"""

from __future__ import annotations

import re
from html import escape, unescape
from pathlib import Path

from thousand.site import plaintex

WORKERS = "assets/javascripts/workers"
# for(let j=i+1;j<q.length;j++)q.slice(i,j)in index&&(...)  (names are minified)
_LOOP = re.compile(
    r"for\(let (?P<j>\w+)=(?P<i>\w+)\+1;"
    r"(?P=j)(?P<op><=?)(?P<q>\w+)\.length;(?P=j)\+\+\)"
    r"(?P=q)\.slice\((?P=i),(?P=j)\)in \w+"
)


class SearchPatchError(RuntimeError):
    pass


def mend(source: str) -> str:
    """The worker's source with the query's last character looked up too."""
    found = list(_LOOP.finditer(source))
    if len(found) != 1:
        raise SearchPatchError(
            f"Material's search worker has {len(found)} copies of the query "
            f"segmentation loop this build mends (expected 1): see "
            f"src/thousand/site/search.py, and drop the mend if Material fixed it"
        )
    m = found[0]
    if m.group("op") == "<=":
        return source  # already looks at the whole query
    start = m.start("op")
    return source[:start] + "<=" + source[m.end("op") :]


def mend_files(site_dir: Path, folder: str, pattern: str, mend, error) -> list[Path]:
    """Rewrite with `mend` every file of the built site matching `pattern` in
    `folder` (Material's shipped scripts); raise `error` if there is none."""
    paths = sorted((Path(site_dir) / folder).glob(pattern))
    if not paths:
        raise error(f"no {pattern} in {Path(site_dir) / folder}")
    for path in paths:
        path.write_text(mend(path.read_text(encoding="utf-8")), encoding="utf-8")
    return paths


def mend_site(site_dir: Path) -> list[Path]:
    """Mend every search worker the build wrote; the files mended."""
    return mend_files(site_dir, WORKERS, "search.*.min.js", mend, SearchPatchError)


# Highlighted code: a <span> per token and an anchor per line number; the index keeps
# only the code's text, so its parser (Python's html.parser, slow) need not see them.
_CODE_BLOCK = re.compile(r"<pre\b.*?</pre>", re.S)
_HIGHLIGHTING = re.compile(r"</?span\b[^>]*>|<a\b[^>]*></a>")


def without_highlighting(html: str) -> str:
    """`html` with its code blocks' highlighting tags taken out, their text kept."""
    return _CODE_BLOCK.sub(lambda m: _HIGHLIGHTING.sub("", m.group(0)), html)


# Math as arithmatex leaves it in the page for MathJax (generic mode): the index
# would show the TeX source, \(P\) and \[ ... \], in every result.
_MATH = re.compile(r'(<(span|div) class="arithmatex">)(.*?)(</\2>)', re.S)


def readable_math(html: str) -> str:
    """`html` with each formula written as the plain text of its symbols."""

    def one(m: re.Match) -> str:
        plain = plaintex.inline(unescape(m.group(3)))
        return m.group(1) + escape(plain, quote=False) + m.group(4)

    return _MATH.sub(one, html)


# A result shows its section's whole text: a section with a code listing or a long
# table made one result 1,400-3,100 px tall. What a result shows is kept short: the
# prose only, cut after SHOWN characters; code and the rest of the prose go to a
# field the search worker indexes but never shows (MORE), so they are still found.
SHOWN = 240
MORE = "more"
_PRE = re.compile(r"<pre\b[^>]*>(.*?)</pre>", re.S)
_TAG = re.compile(r"<[^>]+>")
_ZWSP = "\u200b"  # jieba's word boundaries in Chinese text (mkdocs.yml: search)


def _plain(html: str) -> str:
    return " ".join(unescape(_TAG.sub(" ", html)).split())


def shorten(entry: dict) -> None:
    """Keep a search entry's shown text short: code and prose past SHOWN
    characters move to the hidden field."""
    hidden = [_plain(m.group(1)) for m in _PRE.finditer(entry["text"])]
    text = _PRE.sub(" ", entry["text"]).strip()
    plain = _plain(text)
    if len(plain.replace(_ZWSP, "")) > SHOWN:
        cut, seen = 0, 0
        for cut, c in enumerate(plain):  # noqa: B007
            seen += c != _ZWSP
            if seen > SHOWN:
                break
        # end at a space or a word boundary when one is near
        space = max(plain.rfind(" ", 0, cut), plain.rfind(_ZWSP, 0, cut))
        if space > cut - 30:
            cut = space
        hidden.insert(0, plain[cut:])
        text = escape(plain[:cut].rstrip(" " + _ZWSP), quote=False) + " …"
    entry["text"] = text
    if hidden:
        entry[MORE] = " ".join(h for h in hidden if h)


def readable_index(index) -> None:
    """Have Material's search `index` read each page with `without_highlighting`
    (the same index, at under half the tags to parse; the page keeps its
    highlighting), its math as plain text, and each entry's shown text short."""
    read = index.add_entry_from_context
    fields = index.config["fields"]
    fields.setdefault(MORE, {"boost": fields.get("text", {}).get("boost", 1.0)})

    def add_entry_from_context(page):
        full = page.content
        page.content = readable_math(without_highlighting(full))
        start = len(index.entries)
        try:
            read(page)
        finally:
            page.content = full
        for entry in index.entries[start:]:
            shorten(entry)

    index.add_entry_from_context = add_entry_from_context
