"""A post's table of contents at its top, for narrow screens.

Material shows a page's table of contents in the right-hand sidebar, which it hides
below 76.25em; on ordinary pages the drawer then carries it under the page's nav
entry, but a blog post is in no nav, so on a phone or a tablet a 30-minute post had
no table of contents at all. Every post now gets a closed "On this page" block under
its title and point badge (a <details>, so it costs one line until opened); the
stylesheet hides it where the sidebar shows (docs/overrides/stylesheets/extra.css),
so a desktop reader sees the page as before.

The drawer (the header's menu button, in reach wherever the reader has scrolled to)
carries it too: Material's drawer lists a page's sections under the page's own nav
entry, and a post has none, so its drawer opened on the blog's Tags / Archive /
Categories / Authors only. The sidebar's table of contents is copied into the drawer's
open section as Material writes it for a page in the nav (a toggle `__toc`, a label
with the table-of-contents icon, the sidebar's <nav>), so Material's own styles show
it in the drawer below 60em; from 60em to 76.25em (a tablet, whose drawer shows no
page's sections) the entry is a link to the block under the title.

Both are added to the built page (on_post_page), after the search index has read the
page: they are navigation, not text to find.
"""

from __future__ import annotations

import re

TITLE = {"zh": "本页目录", "en": "On this page"}
_BADGE = re.compile(r'<p class="tp-point">.*?</p>', re.S)
_H1_END = re.compile(r"</h1>")
ANCHOR = "tp-toc"  # the block's id: the drawer's entry leads to it where wider
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
        f'<details class="tp-toc" id="{ANCHOR}"><summary>{title}</summary>'
        f'<nav aria-label="{title}">{_list(items, DEPTH)}</nav></details>'
    )


def add(output: str, toc, lang: str) -> str:
    """`output` (a built post) with the block after the point badge under the title,
    or after the title where a post has no badge, and the table of contents in the
    drawer."""
    toc_html = block(toc, lang)
    if not toc_html:
        return output
    anchor = _BADGE.search(output) or _H1_END.search(output)
    if anchor is not None:
        output = output[: anchor.end()] + "\n" + toc_html + output[anchor.end() :]
    return in_drawer(output, lang)


_SIDEBAR_TOC = re.compile(r'<nav class="md-nav md-nav--secondary"')
_NAV_TAG = re.compile(r"<nav\b|</nav>")
_PRIMARY = re.compile(r'<nav class="md-nav md-nav--primary')
_ACTIVE_LIST = re.compile(
    r'<li class="md-nav__item md-nav__item--active[^"]*">.*?'
    r'<ul class="md-nav__list" data-md-scrollfix>',
    re.S,
)


def _element(html: str, start: int) -> str:
    """The <nav> element opening at `start`, with the <nav>s nested in it."""
    depth = 0
    for m in _NAV_TAG.finditer(html, start):
        depth += 1 if m.group(0) == "<nav" else -1
        if depth == 0:
            return html[start : m.end()]
    raise ValueError("a <nav> that never closes")


def in_drawer(output: str, lang: str) -> str:
    """`output` with the sidebar's table of contents at the top of the drawer's
    open section (the blog's, for a post); unchanged where the page has no sidebar
    table of contents, no drawer, or a drawer entry with it already."""
    sidebar = _SIDEBAR_TOC.search(output)
    primary = _PRIMARY.search(output)
    if sidebar is None or primary is None or 'id="__toc"' in output:
        return output
    active = _ACTIVE_LIST.search(output, primary.start())
    if active is None or active.start() > sidebar.start():
        return output
    title = TITLE[lang]
    entry = (
        '<li class="md-nav__item md-nav__item--active tp-toc-drawer">'
        '<input class="md-nav__toggle md-toggle" type="checkbox" id="__toc">'
        '<label class="md-nav__link md-nav__link--active" for="__toc">'
        f'<span class="md-ellipsis">{title}</span>'
        '<span class="md-nav__icon md-icon"></span></label>'
        f'<a href="#{ANCHOR}" class="md-nav__link md-nav__link--active">{title}</a>'
        f"{_element(output, sidebar.start())}</li>"
    )
    at = active.end()
    return output[:at] + entry + output[at:]
