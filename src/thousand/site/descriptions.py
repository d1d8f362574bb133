"""A description of its own for each page that has no front matter to hold one: the
blog's generated lists (archive, category, author, later pages of each), the
notebook (its file belongs to the recorded GPU run) and the contributing page. Link
previews and search engines showed the site's description for all of them.

A page's own front matter `description` wins over BY_PAGE."""

from __future__ import annotations

import re

# by source path: pages written in Markdown or a notebook, no front matter here
BY_PAGE = {
    "zh": {
        "notebooks/first-kernel.ipynb": (
            "《为什么深度学习在 GPU 上更快》动手部分的笔记本："
            "同样的核函数、检查和计时，可以一格一格运行，附下载按钮。"
        ),
        "contributing.md": (
            "怎样搭好环境、加一个知识点、跑测试和 GPU 基准，以及文章要守的规矩。"
        ),
    },
    "en": {
        "notebooks/first-kernel.ipynb": (
            "The hands-on part of “Why deep learning runs faster on GPUs” as a "
            "notebook: the same kernel, checks and timings, to run a cell at a time "
            "or download."
        ),
        "contributing.md": (
            "How to set up, add a point, run the tests and the GPU benchmarks, "
            "and the rules every post keeps."
        ),
    },
}

# the blog's generated pages, by what they list ({name}: the page's own title)
VIEWS = {
    "zh": {
        "archive": "{name}发表的全部文章，新的在前。",
        "category": "「{name}」类的全部文章，新的在前。",
        "author": "{name}写的全部文章，新的在前。",
        "index": "本站的全部文章，新的在前。",
        "page": "（第 {n} 页）",
    },
    "en": {
        "archive": "Every post published in {name}, newest first.",
        "category": "Every post about {name}, newest first.",
        "author": "Every post written by {name}, newest first.",
        "index": "Every post on the site, newest first.",
        "page": " (page {n})",
    },
}

_VIEW = re.compile(r"^blog/(?:(archive|category|author)/[^/]+/)?(?:page/(\d+)/)?$")


def is_view(url: str) -> bool:
    """Whether `url` is one of the blog's generated lists (its first page aside)."""
    m = _VIEW.match(url)
    return bool(m) and (m.group(1) is not None or m.group(2) is not None)


def describe(url: str, src_uri: str, title: str, lang: str) -> str | None:
    """This page's description, or None where it has its own (or needs none)."""
    if src_uri in BY_PAGE[lang]:
        return BY_PAGE[lang][src_uri]
    if not is_view(url):
        return None  # the blog's first page has front matter
    m = _VIEW.match(url)
    words = VIEWS[lang]
    text = words[m.group(1) or "index"].format(name=title)
    if m.group(2):
        text = text[:-1] + words["page"].format(n=m.group(2)) + text[-1]
    return text
