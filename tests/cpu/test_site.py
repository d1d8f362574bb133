"""The site: both languages build with --strict (so every include and every results
directive resolves), hold the same pages, switch language onto the same page, and
index Chinese text as words for search."""

import json
import re
from pathlib import Path

import pytest

from thousand.bench.ledger import ROOT
from thousand.site.__main__ import build

DOCS = {"zh": ROOT / "docs" / "zh", "en": ROOT / "docs" / "en"}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build(out)  # raises if either build fails or warns (strict)
    return out


def _pages(root: Path) -> set[str]:
    return {
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.suffix in {".md", ".ipynb"}
    }


def test_both_languages_have_the_same_pages():
    assert _pages(DOCS["zh"]) == _pages(DOCS["en"])


def test_posts_share_an_ascii_slug():
    for lang, docs in DOCS.items():
        for post in (docs / "blog" / "posts").glob("*.md"):
            slug = re.search(r"^slug: (\S+)$", post.read_text(), re.M)
            assert slug, f"{lang}/{post.name} has no slug"
            assert slug.group(1).isascii() and slug.group(1) == post.stem


def _switch_links(html: str) -> dict[str, str]:
    links = re.findall(
        r'<a href="([^"]+)"\s+hreflang="(\w+)" class="md-select__link"', html
    )
    return {lang: href for href, lang in links}


@pytest.mark.parametrize(
    "page", ["index.html", "blog/index.html", "blog/why-gpu/index.html"]
)
def test_language_switch_lands_on_the_same_page(site, page):
    for here, root in (("zh", site), ("en", site / "en")):
        html_path = root / page
        links = _switch_links(html_path.read_text())
        assert set(links) == {"zh", "en"}
        for lang, href in links.items():
            target = (html_path.parent / href).resolve()
            expected = (site if lang == "zh" else site / "en") / page
            assert (
                target / "index.html" == expected.resolve()
                or target == expected.resolve().parent
            ), f"{here}:{page} -> {lang}: {href}"


def test_every_results_directive_was_rendered(site):
    for html in site.rglob("*.html"):
        assert "results:" not in html.read_text(), f"unrendered directive in {html}"
    assert (site / "assets/plots/b1-cpu-vs-gpu.svg").stat().st_size > 1000
    assert (site / "en/assets/plots/b1-cpu-vs-gpu.svg").stat().st_size > 1000


def test_chinese_search_finds_the_post_by_a_word(site):
    index = json.loads((site / "search/search_index.json").read_text())
    separator = re.compile(index["config"]["separator"])
    hits = {
        doc["location"]
        for doc in index["docs"]
        if "线程块" in separator.split(doc["text"] + " " + doc["title"])
    }
    assert any(loc.startswith("blog/why-gpu/") for loc in hits), sorted(hits)[:5]


def test_english_search_finds_the_post(site):
    index = json.loads((site / "en/search/search_index.json").read_text())
    hits = {d["location"] for d in index["docs"] if "grid-stride" in d["text"].lower()}
    assert any(loc.startswith("blog/why-gpu/") for loc in hits)
