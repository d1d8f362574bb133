"""A post's table of contents at its top, for narrow screens.

Material shows a page's table of contents in the right-hand sidebar, which it hides
below 76.25em; on ordinary pages the drawer then carries it under the page's nav
entry, but a blog post is in no nav, so on a phone or a tablet a 30-minute post had
no table of contents at all. Every post now gets a closed "On this page" block under
its title and point badge (a <details>, so it costs one line until opened); the
stylesheet hides it where the sidebar shows (docs/overrides/stylesheets/extra.css),
so a desktop reader sees the page as before.

Added to the built page (on_post_page), after the search index has read the page: the
block is navigation, not text to find.
"""

from __future__ import annotations

import re

TITLE = {"zh": "本页目录", "en": "On this page"}
_BADGE = re.compile(r'<p class="tp-point">.*?</p>', re.S)
_H1_END = re.compile(r"</h1>")
DEPTH = 2  # the post's sections and their subsections (h2, h3)


def _items(toc) -> list:
    """Material's rule (partials/toc.html): a lone h1 at the top is the page's title,
    and its children are the table of contents."""
    items = list(toc)
    if len(items) == 1 and items[0].level == 1:
        return list(items[0].children)
    return items


def _list(items, depth: int) -> str:
    if not items or depth == 0:
        return ""
    rows = []
    for item in items:
        # the title as Material's own sidebar prints it (plain text, TeX made text)
        inner = _list(item.children, depth - 1)
        rows.append(f'<li><a href="#{item.id}">{item.title}</a>{inner}</li>')
    return "<ol>" + "".join(rows) + "</ol>"


def block(toc, lang: str) -> str:
    """The closed block listing `toc`; empty when there is nothing to list."""
    items = _items(toc)
    if not items:
        return ""
    title = TITLE[lang]
    return (
        f'<details class="tp-toc"><summary>{title}</summary>'
        f'<nav aria-label="{title}">{_list(items, DEPTH)}</nav></details>'
    )


def add(output: str, toc, lang: str) -> str:
    """`output` (a built post) with the block after the point badge under the title,
    or after the title where a post has no badge."""
    toc_html = block(toc, lang)
    if not toc_html:
        return output
    anchor = _BADGE.search(output) or _H1_END.search(output)
    if anchor is None:
        return output
    return output[: anchor.end()] + "\n" + toc_html + output[anchor.end() :]
