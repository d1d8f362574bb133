"""The site: both languages build with --strict (so every include and every results
directive resolves), hold the same pages, switch language onto the same page, and
index Chinese text as words for search."""

import json
import re
from datetime import datetime
from html import unescape
from pathlib import Path

import pytest

from thousand.bench.ledger import ROOT

# One worker builds the site once (a minute) and runs every test that reads it.
pytestmark = pytest.mark.xdist_group("site")

DOCS = {"zh": ROOT / "docs" / "zh", "en": ROOT / "docs" / "en"}


@pytest.fixture(scope="module")
def site(built_site) -> Path:
    return built_site  # conftest: raises if either build fails or warns (strict)


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


def test_hreflang_links_lead_to_the_same_page_in_each_language(site, site_url):
    """Each page's <link rel="alternate" hreflang> name this page in either language
    (as absolute URLs), not each language's home; every one of them was built."""
    roots = {"zh": site, "en": site / "en"}
    checked = 0
    for here, root in roots.items():
        for html_path in root.rglob("*.html"):
            rel = html_path.relative_to(root).as_posix()
            if here == "zh" and rel.startswith("en/"):
                continue
            text = html_path.read_text()
            links = dict(
                (lang, href)
                for href, lang in re.findall(
                    r'<link rel="alternate" href="([^"]+)" hreflang="(\w+)">', text
                )
            )
            assert set(links) == {"zh", "en"}, f"{here}/{rel}: {links}"
            # the 404 page is no page's copy: each language's home
            url = "" if rel == "404.html" else rel.removesuffix("index.html")
            for lang, href in links.items():
                want = site_url + ("en/" if lang == "en" else "") + url
                assert href == want, f"{here}/{rel} -> {lang}: {href}, not {want}"
                target = href.removeprefix(site_url)
                assert (site / target).is_file() or (
                    site / target / "index.html"
                ).is_file(), f"{here}/{rel} -> {lang}: {href} was not built"
                checked += 1
    assert checked > 200, checked


def test_the_404_pages_speak_their_language_and_link_within_the_site(site):
    for root, words in ((site, "页面不存在"), (site / "en", "page not found")):
        html = (root / "404.html").read_text()
        assert words in html
        for lang, href in _switch_links(html).items():
            # "//en/" would be a link to a host named "en"
            assert href.startswith("/") and not href.startswith("//"), (lang, href)


def test_the_benchmarks_pages_are_built_in_both_languages_and_in_the_nav(site):
    """One generated page per post with kernels (src/thousand/site/benchmarks.py),
    at the same path in both languages, listed under the overview in the nav."""
    from thousand.site import benchmarks

    pages = benchmarks.pages("en")
    assert pages
    for root in (site, site / "en"):
        overview = (root / "benchmarks" / "index.html").read_text()
        for uri in pages:
            slug = uri.removeprefix("benchmarks/").removesuffix(".md")
            assert (root / "benchmarks" / slug / "index.html").is_file(), slug
            assert f'href="{slug}/"' in overview, slug


def test_tables_of_contents_show_no_tex(site):
    """MathJax renders the page, never its table of contents: a heading's inline
    math must reach the navigation as plain text."""
    bad = []
    for html in site.rglob("*.html"):
        for m in re.finditer(
            r'class="md-nav__link"[^>]*>(.*?)</a>', html.read_text(), re.S
        ):
            text = re.sub(r"<[^>]+>", "", m.group(1))
            if "\\(" in text or "\\)" in text or "$" in text:
                bad.append(f"{html.relative_to(site)}: {' '.join(text.split())}")
    assert not bad, "\n".join(bad[:20])


_UNTYPESET = re.compile(
    r"<(pre|code|script|style|svg|mjx-container|textarea)\b.*?</\1>", re.S
)


def _math_left_as_tex(html: str) -> list[str]:
    """Math delimiters in a page's article text, outside code and typeset math: TeX
    that no formula took in (`$= $` with a space inside is no formula)."""
    article = re.search(r"<article\b.*?</article>", html, re.S)
    if article is None:
        return []
    text = unescape(re.sub(r"<[^>]+>", "", _UNTYPESET.sub("", article.group(0))))
    return [m.group(0) for m in re.finditer(r".{0,20}(\$|\\[(\[]).{0,20}", text)]


def test_no_page_shows_tex_that_was_not_typeset(site):
    """memory-hierarchy wrote `out` $= $ `in`$^T$: the first pair was no formula
    and showed its dollars. No page's text shows a $, \\( or \\[ outside code."""
    old = "<article><p><code>out</code> $= $ <code>in</code>T</p></article>"
    assert _math_left_as_tex(old) == [" $= $ T"]  # the check sees it
    found = {
        str(page.relative_to(site)): left
        for page in sorted(site.rglob("*.html"))
        if (left := _math_left_as_tex(page.read_text()))
    }
    assert not found, found


def test_plain_math_reads_tex_as_text():
    from thousand.site.hooks import plain_math

    assert plain_math(r"深度 \(O(\log n)\)") == "深度 O(log n)"
    assert plain_math(r"\(dW\) and \(\mathbf{x} \times \sigma\)") == "dW and x × σ"
    assert plain_math("no math, $5 off") == "no math, $5 off"


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


def test_the_search_worker_looks_up_a_query_to_its_last_character(site):
    """Material's worker cut a Chinese query without its last character ("张量核心"
    -> "张量* 核*"); every build mends the worker it ships (thousand.site.search)."""
    from thousand.site import search

    for root in (site, site / "en"):
        (worker,) = (root / search.WORKERS).glob("search.*.min.js")
        (loop,) = search._LOOP.finditer(worker.read_text())
        assert loop.group("op") == "<=", loop.group(0)


def test_the_search_mend_changes_one_bound_and_refuses_a_worker_it_does_not_know():
    from thousand.site import search

    source = "x;for(let o=s+1;o<t.length;o++)t.slice(s,o)in e&&(n[s]=o-s);y"
    mended = search.mend(source)
    assert mended == source.replace("o<t.length", "o<=t.length")
    assert search.mend(mended) == mended
    with pytest.raises(search.SearchPatchError, match="0 copies"):
        search.mend("for(let j=0;j<q.length;j++)")


def test_the_anchor_mend_decodes_the_hash_once_and_refuses_a_bundle_it_does_not_know():
    """Material's bundle looked a section up by the raw, percent-encoded hash (every
    Chinese heading's): the shipped bundle decodes it (thousand.site.anchors)."""
    from thousand.site import anchors

    source = "x();function vn(){return location.hash.slice(1)}y();"
    mended = anchors.mend(source)
    assert "location.hash.slice(1)}" not in mended and "decodeURIComponent" in mended
    assert mended.startswith("x();function vn(){") and mended.endswith("}y();")
    assert anchors.mend(mended) == mended
    for other in ("no such function", source + source):
        with pytest.raises(anchors.AnchorPatchError, match="anchors.py"):
            anchors.mend(other)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_shipped_bundle_decodes_the_hash(site, lang):
    from thousand.site import anchors

    root = site if lang == "zh" else site / "en"
    (bundle,) = (root / "assets/javascripts").glob("bundle.*.min.js")
    text = bundle.read_text()
    assert not anchors.RAW.search(text) and "decodeURIComponent(h)" in text


def test_search_reads_code_as_text_and_indexes_the_same():
    """The search index gets a page's code blocks without their highlighting tags:
    Material's parser must find the same sections, text and code."""
    import markdown
    from material.plugins.search.plugin import Parser

    from thousand.site import search

    source = (
        '## 核函数 {#k}\n\n向量加法：\n\n```cuda linenums="1"\n'
        "__global__ void add(const float* a, float* c) {\n"
        "    c[threadIdx.x] = a[threadIdx.x] + 1.0f;  // 每线程一个\n}\n```\n\n"
        '- `inline` 与 <span class="x">span</span> 照旧\n'
    )
    html = markdown.markdown(
        source,
        extensions=["attr_list", "pymdownx.highlight", "pymdownx.superfences"],
        extension_configs={
            "pymdownx.highlight": {"anchor_linenums": True, "line_spans": "__span"}
        },
    )
    plain = search.without_highlighting(html)
    assert html.count("<span") > 20 and plain.count("<span") == 1  # the prose's

    def sections(text):
        parser = Parser()
        parser.feed(text)
        parser.close()
        return [(s.id, "".join(s.text), "".join(s.title)) for s in parser.data]

    assert sections(plain) == sections(html)
    assert "threadIdx.x] = a[threadIdx.x]" in sections(html)[-1][1]


_RAW_TEX = re.compile(r"\\\(|\\\[|\$\$|\\[A-Za-z]+")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_search_shows_formulas_as_text_and_keeps_results_short(site, lang):
    """No search result shows TeX source (\\(P\\), \\[ ... \\], \\frac) or a code
    listing, and each shows at most SHOWN characters of prose; the rest is indexed
    in the hidden field, so it is still found."""
    from thousand.site import search

    root = site if lang == "zh" else site / "en"
    index = json.loads((root / "search/search_index.json").read_text())
    assert search.MORE in index["config"]["fields"]
    raw, long, code = [], [], []
    for doc in index["docs"]:
        shown = doc["title"] + " " + doc["text"]
        if _RAW_TEX.search(shown):
            raw.append(f"{doc['location']}: {_RAW_TEX.search(shown).group(0)}")
        if "<pre" in doc["text"]:
            code.append(doc["location"])
        plain = re.sub(r"<[^>]+>", "", unescape(doc["text"])).replace("\u200b", "")
        if len(" ".join(plain.split())) > search.SHOWN + 2:
            long.append(doc["location"])
    assert not raw, raw[:10]
    assert not code, code[:10]
    assert not long, long[:10]
    hidden = " ".join(d.get(search.MORE, "") for d in index["docs"])
    assert "__global__" in hidden  # the code listings, searchable still


def test_plain_text_of_tex():
    from thousand.site.plaintex import inline, text

    assert text(r"\text{字节}") == "字节"
    assert inline(r"算出 \(P\) 个") == "算出 P 个"
    assert text(r"\frac{\partial L}{\partial w_{ij}}") == "(∂ L)/(∂ w_ij)"
    assert text(r"\mathrm{softmax}\left(\frac{QK^\top}{\sqrt{d_k}}\right)V") == (
        "softmax(QKᵀ/(√d_k))V"
    )
    assert text(r"\begin{aligned} a &= b \\\\ c &= d \end{aligned}") == "a = b c = d"
    assert (
        text(r"x_{i}^{2} \le \|x\|_2 \quad \mathbb{E}[\hat{y}]") == "x_i^2 ≤ ‖x‖_2 𝔼[ŷ]"
    )
    assert "\\" not in text(r"\unknowncommand{x} \, y")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_post_lists_its_sections_at_the_top_for_narrow_screens(site, lang):
    """A post is in no nav, so below 76.25em (the sidebar hidden) Material's drawer
    has no table of contents of its own for it: each post carries an "On this page"
    block under the title, listing the sidebar's sections and subsections (and the
    drawer a copy of the sidebar's: the next test)."""
    root = site if lang == "zh" else site / "en"
    for post in sorted((DOCS[lang] / "blog" / "posts").glob("*.md")):
        html = (root / "blog" / post.stem / "index.html").read_text()
        block = re.search(r'<details class="tp-toc"[^>]*>(.*?)</details>', html, re.S)
        assert block, post.stem
        assert html.index('class="tp-point"') < block.start() < html.index("<h2"), (
            post.stem
        )
        ours = re.findall(r'href="#([^"]+)"', block.group(1))
        nav = html[html.index("md-nav--secondary") :]
        nav = nav[: nav.index("</nav>\n</div>") if "</nav>\n</div>" in nav else None]
        sidebar = re.findall(r'<a href="#([^"]+)" class="md-nav__link"', nav)
        assert ours and set(ours) <= set(sidebar), post.stem
        h2 = re.findall(r'<h2 id="([^"]+)"', html)
        assert set(h2) <= set(ours), post.stem


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_post_carries_its_table_of_contents_in_the_drawer(site, lang):
    """The drawer (the header's menu, in reach wherever the reader has scrolled)
    opens on the blog's section: its first entry is the post's own table of
    contents, the sidebar's every link, as Material writes it for a page in the
    nav (a __toc toggle and its label); the entry's link leads to the block."""
    root = site if lang == "zh" else site / "en"
    for post in sorted((DOCS[lang] / "blog" / "posts").glob("*.md")):
        html = (root / "blog" / post.stem / "index.html").read_text()
        primary = html.index('<nav class="md-nav md-nav--primary')
        entry = html.find('<li class="md-nav__item md-nav__item--active tp-toc-drawer')
        sidebar = html.index('<div class="md-sidebar md-sidebar--secondary"')
        assert primary < entry < sidebar, post.stem
        assert html.count('id="__toc"') == 1, post.stem
        # the entry sits first in the open section's list
        before = html[:entry].rstrip()
        assert before.endswith('<ul class="md-nav__list" data-md-scrollfix>'), post.stem
        link = re.compile(r'<a href="#([^"]+)" class="md-nav__link"')
        drawer, side = link.findall(html[entry:sidebar]), link.findall(html[sidebar:])
        assert drawer and drawer == side, post.stem
        assert 'for="__toc"' in html[entry : entry + 400], post.stem
        assert 'href="#tp-toc"' in html[entry : entry + 600], post.stem
        assert '<details class="tp-toc" id="tp-toc">' in html, post.stem


def test_english_search_finds_the_post(site):
    index = json.loads((site / "en/search/search_index.json").read_text())
    hits = {  # shown or in the part a result does not show (search.MORE)
        d["location"]
        for d in index["docs"]
        if "grid-stride" in (d["text"] + d.get("more", "")).lower()
    }
    assert any(loc.startswith("blog/why-gpu/") for loc in hits)


# -- the anatomy every post shares (shared/ARTICLE.md) --------------------------

OPENING = {"zh": "## 你将学到", "en": "## You will learn"}
RUN_IT = {"zh": "## 自己跑一遍", "en": "## Run it yourself"}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_post_opens_with_you_will_learn_and_has_run_it_yourself(lang):
    posts = sorted((DOCS[lang] / "blog" / "posts").glob("*.md"))
    assert posts
    for post in posts:
        headings = re.findall(r"^## .+$", post.read_text(), re.M)
        where = f"{lang}/{post.name}"
        assert headings[0] == OPENING[lang], f"{where} opens with {headings[0]}"
        assert RUN_IT[lang] in headings, f"{where} has no {RUN_IT[lang]}"


# -- learning paths ------------------------------------------------------------


def test_every_post_is_a_point_of_a_track():
    from thousand.site import tracks

    for lang, docs in DOCS.items():
        for post in (docs / "blog" / "posts").glob("*.md"):
            point = tracks.front_matter(post).get("point")
            assert point in tracks.point_ids(), f"{lang}/{post.name}: point {point!r}"
        assert tracks.written(docs)  # raises on an unknown or doubled point


def test_track_pages_link_written_points_and_mark_the_rest(site):
    from thousand.site import tracks

    for lang, root in (("zh", site), ("en", site / "en")):
        written = tracks.written(DOCS[lang])
        for track, page in (("A", "neural-networks"), ("B", "cuda")):
            html = (root / "tracks" / page / "index.html").read_text()
            items = re.findall(r"<li>(.*?)</li>", html, re.S)
            points = tracks.tracks()[track]["points"]
            assert len(items) == len(points)
            for p, item in zip(points, items, strict=True):
                assert p["id"] in item
                if p["id"] in written:
                    assert "<a href=" in item and "tp-unwritten" not in item
                else:
                    assert "<a " not in item and "tp-unwritten" in item


def test_track_pages_give_each_written_point_its_summary_time_and_a_start(site):
    """A track page gives each written point its post's description and reading
    time (as the post shows it), marks the first written point as where to start,
    and lists the rest as not written."""
    from thousand.site import tracks

    start = {"zh": "从这里开始", "en": "Start here"}
    for lang, root in (("zh", site), ("en", site / "en")):
        done = tracks.written(DOCS[lang])
        for track, page in (("A", "neural-networks"), ("B", "cuda")):
            html = (root / "tracks" / page / "index.html").read_text()
            items = re.findall(r"<li>(.*?)</li>", html, re.S)
            assert html.count('class="tp-start"') == 1
            first = True
            for p, item in zip(tracks.tracks()[track]["points"], items, strict=True):
                if p["id"] not in done:
                    assert "tp-unwritten" in item and "tp-time" not in item
                    continue
                post = (
                    root / "blog" / done[p["id"]]["slug"] / "index.html"
                ).read_text()
                minutes = re.search(r"(\d+) (?:min read|分钟)", post).group(1)
                time = re.search(r'class="tp-time"[^>]*>· [^<]*?(\d+)', item)
                assert time and time.group(1) == minutes, (lang, p["id"], item)
                summary = re.search(r'class="tp-summary">(.*?)</span>', item, re.S)
                assert summary, (lang, p["id"])
                assert (
                    unescape(summary.group(1))[:40] == done[p["id"]]["description"][:40]
                )
                assert (start[lang] in item) == first, (lang, p["id"])
                first = False


def test_a_track_naming_an_unknown_point_fails(tmp_path):
    from thousand.site import tracks

    posts = tmp_path / "blog" / "posts"
    posts.mkdir(parents=True)
    (posts / "x.md").write_text("---\nslug: x\npoint: B99\n---\n# x\n")
    with pytest.raises(tracks.TrackError, match="B99"):
        tracks.written(tmp_path)


# -- blog: feeds, tags, archive, reading time ------------------------------------


def test_each_language_has_an_rss_feed_of_its_posts(site):
    for lang, root in (("zh", site), ("en", site / "en")):
        feed = (root / "feed_rss_created.xml").read_text()
        for post in (DOCS[lang] / "blog" / "posts").glob("*.md"):
            assert f"/blog/{post.stem}/</link>" in feed, f"{lang}: {post.stem}"
        assert "<language>" + lang in feed


def test_feeds_show_the_logo_and_pages_have_link_previews(site):
    """RSS 2.0's <image> needs an absolute URL to a raster image (the plugin wrote
    <url>None</url> without one); every page carries Open Graph and Twitter card
    metadata with its own title and description; /favicon.ico exists."""
    assert (site / "favicon.ico").read_bytes()[:4] == b"\x00\x00\x01\x00"  # ICO
    for root in (site, site / "en"):
        for feed in ("feed_rss_created.xml", "feed_rss_updated.xml"):
            url = re.search(r"<image>\s*<url>([^<]*)</url>", (root / feed).read_text())
            assert url and url.group(1).endswith("/images/points-144.png"), feed
        assert (root / "images" / "points-144.png").exists()
    for lang, root in (("zh", site), ("en", site / "en")):
        for post in (DOCS[lang] / "blog" / "posts").glob("*.md"):
            page = (root / "blog" / post.stem / "index.html").read_text()
            description = re.search(r'^description: "?(.+?)"?$', post.read_text(), re.M)
            og = dict(re.findall(r'<meta property="og:(\w+)" content="([^"]*)"', page))
            assert og["type"] == "article" and og["url"].endswith(f"/{post.stem}/")
            assert unescape(og["description"]) == description.group(1).strip()
            assert '<meta name="twitter:card" content="summary">' in page
        home = dict(
            re.findall(
                r'<meta property="og:(\w+)" content="([^"]*)"',
                (root / "index.html").read_text(),
            )
        )
        assert home["type"] == "website" and home["title"]


def test_feed_items_carry_their_posts_first_figure(site, site_url):
    """Each feed item whose post shows one of the site's figures carries the first
    as an <enclosure>: its absolute URL, the built file's type and length; a post
    with none (its charts still waiting for the GPU run) gets none."""
    from urllib.parse import urljoin

    for root, base in ((site, site_url), (site / "en", site_url + "en/")):
        shown = {}
        for page in (root / "blog").glob("*/index.html"):
            html = page.read_text()
            article = html[html.index("<article") : html.index("</article>")]
            first = re.search(
                r'<img\b[^>]*?\bsrc="([^"]*assets/(?:plots|access)/[^"]+)"', article
            )
            if first:
                url = f"{base}blog/{page.parent.name}/"
                shown[url] = urljoin(url, unescape(first.group(1)))
        assert len(shown) >= 10, len(shown)  # the recorded ones at least
        for name in ("feed_rss_created.xml", "feed_rss_updated.xml"):
            feed = (root / name).read_text()
            items = re.findall(r"<item>.*?</item>", feed, re.S)
            assert len(items) == len(list((DOCS["en"] / "blog" / "posts").glob("*.md")))
            for item in items:
                link = unescape(re.search(r"<link>([^<]*)</link>", item).group(1))
                found = re.findall(r"<enclosure ([^>]*)/>", item)
                if link not in shown:
                    assert not found, (name, link)
                    continue
                assert len(found) == 1, (name, link)
                attrs = dict(re.findall(r'(\w+)="([^"]*)"', found[0]))
                assert unescape(attrs["url"]) == shown[link], (name, link)
                assert attrs["type"] == "image/svg+xml"
                built = root / unescape(attrs["url"]).removeprefix(base)
                assert int(attrs["length"]) == built.stat().st_size, (name, link)


def test_the_feeds_images_come_only_from_the_build(tmp_path):
    from thousand.site import feedimages

    page = '<p><img alt="x" src="../../assets/plots/ladder-a.svg" /></p>'
    assert feedimages.first_figure(page, "blog/a/") == "assets/plots/ladder-a.svg"
    assert (
        feedimages.first_figure('<img src="../../images/points.svg">', "blog/a/")
        is None
    )
    feed = tmp_path / "feed_rss_created.xml"
    item = "<item> <link>https://h/s/blog/a/</link> </item>"
    feed.write_text(f"<rss><channel>{item}{item.replace('/a/', '/b/')}</channel></rss>")
    with pytest.raises(feedimages.FeedImageError, match="ladder-a.svg.*not built"):
        feedimages.add_to_feeds(
            tmp_path, "https://h/s/", {"blog/a/": "assets/plots/ladder-a.svg"}
        )
    (tmp_path / "assets" / "plots").mkdir(parents=True)
    (tmp_path / "assets" / "plots" / "ladder-a.svg").write_text("<svg/>")
    added = feedimages.add_to_feeds(
        tmp_path, "https://h/s/", {"blog/a/": "assets/plots/ladder-a.svg"}
    )
    assert added == 1
    written = feed.read_text()
    assert written.count("<enclosure") == 1
    url = "https://h/s/assets/plots/ladder-a.svg"
    tag = f'<enclosure url="{url}" type="image/svg+xml" length="6" /> </item>'
    assert tag in written and "/b/</link> </item>" in written
    with pytest.raises(feedimages.FeedImageError, match="has an image already"):
        feedimages.add_to_feeds(
            tmp_path, "https://h/s/", {"blog/a/": "assets/plots/ladder-a.svg"}
        )
    with pytest.raises(feedimages.FeedImageError, match="site_url"):
        feedimages.add_to_feeds(tmp_path, "", {})


def test_a_training_curve_is_shown_once_as_a_chart_beside_its_log(site):
    """`results:experiment NAME chart` draws the chart and the notes without the
    table: LeNet-5 and backpropagation print the training log already, and the
    curve's 30 rows a third time said nothing new."""
    for lang, root in (("zh", site), ("en", site / "en")):
        for post, name in (
            ("lenet-5", "a6-lenet-digits"),
            ("backpropagation", "a4-mlp-digits"),
        ):
            page = (root / "blog" / post / "index.html").read_text()
            assert f"experiment-{name}.svg" in page, f"{lang}: {post}"
            assert not re.search(r"<th[^>]*>[^<]*epoch[^<]*</th>", page), post


def test_every_post_names_its_point_and_ends_with_the_next(site):
    """Under the title, the point and its track; at the end, the next point of the
    track: a link when it is written (while A6's next, A7, is not, the next point
    that is written is linked too)."""
    from thousand.site import tracks

    for lang, root in (("zh", site), ("en", site / "en")):
        for post in (DOCS[lang] / "blog" / "posts").glob("*.md"):
            page = (root / "blog" / post.stem / "index.html").read_text()
            point = re.search(r"^point: (\w+)$", post.read_text(), re.M).group(1)
            assert 'class="tp-point">' in page and f"<strong>{point}</strong>" in page
            assert 'class="tp-next">' in page, f"{lang}: {post.stem}"
        lenet = (root / "blog" / "lenet-5" / "index.html").read_text()
        end = lenet[lenet.index('class="tp-next">') :]
        done = tracks.written(DOCS[lang])
        if "A7" in done:
            assert f'href="../{done["A7"]["slug"]}/"' in end
        else:  # A7 named, and the next point that is written linked
            later = tracks.neighbours("A6", DOCS[lang])[1]  # "blog/<slug>/"
            assert "A7" in end and f'href="../{later.split("/")[1]}/"' in end


def test_posts_link_the_previous_and_next_point_of_their_track(site):
    """A post ends with the previous point and the next one, and its <link rel=prev
    / next> follow the track's order (tracks.yml), not the date: B2's neighbours
    are B1 and B3, not a post of the other track; a track's first post has no
    rel=prev."""
    from thousand.site import tracks

    for lang, root in (("zh", site), ("en", site / "en")):
        done = tracks.written(DOCS[lang])
        for track in tracks.tracks().values():
            order = [p["id"] for p in track["points"] if p["id"] in done]
            for k, point in enumerate(order):
                slug = done[point]["slug"]
                page = (root / "blog" / slug / "index.html").read_text()
                head = page[: page.index("</head>")]
                links = dict(
                    re.findall(r'<link rel="(prev|next)" href="([^"]*)"', head)
                )
                want = {}
                if k > 0:
                    want["prev"] = f"../{done[order[k - 1]]['slug']}/"
                if k + 1 < len(order):
                    want["next"] = f"../{done[order[k + 1]]['slug']}/"
                assert links == want, f"{lang} {point}: {links} != {want}"
                end = page[page.index('class="tp-prev">') :]
                if "prev" in want:
                    assert f'href="{want["prev"]}"' in end, f"{lang} {point}"
        b2 = (root / "blog/how-a-gpu-works/index.html").read_text()
        assert '<link rel="prev" href="../why-gpu/">' in b2
        assert '<link rel="next" href="../programming-model/">' in b2


def test_the_chinese_blog_speaks_chinese_and_its_back_link_says_where_it_goes(site):
    """Material's Chinese has no word for Authors, and says 回到主页 (back to the
    home page) for a link to the post list: partials/language.html corrects both."""
    for page in ("blog/index.html", "blog/lenet-5/index.html"):
        html = (site / page).read_text()
        assert "Authors" not in html and "回到主页" not in html, page
    assert "回到文章列表" in (site / "blog/lenet-5/index.html").read_text()
    assert "Authors" in (site / "en/blog/index.html").read_text()


def test_the_tag_index_stays_out_of_search(site):
    """It lists every post's title, so it matched nearly every query."""
    for root in (site, site / "en"):
        index = json.loads((root / "search/search_index.json").read_text())
        assert not [d for d in index["docs"] if "blog/tags/" in d["location"]]


def _post_dates(lang: str) -> dict[str, datetime]:
    """Point -> its post's date and time, from the front matter."""
    from thousand.site import tracks

    out = {}
    for point, post in tracks.written(DOCS[lang]).items():
        date = tracks.front_matter(DOCS[lang] / post["uri"])["date"]
        if not isinstance(date, datetime):  # a day without a time: its midnight
            date = datetime(date.year, date.month, date.day)
        out[point] = date
    return out


def test_the_feeds_date_posts_by_their_own_date(site):
    """Not by the build time (the plugin's default without git dates): both feeds
    give each post the date and time of its front matter, in Asia/Shanghai."""
    from thousand.site import tracks

    for lang, root in (("zh", site), ("en", site / "en")):
        slugs = {p: Path(x["uri"]).stem for p, x in tracks.written(DOCS[lang]).items()}
        dates = {slugs[p]: d for p, d in _post_dates(lang).items()}
        for feed in ("feed_rss_created.xml", "feed_rss_updated.xml"):
            items = (root / feed).read_text().split("<item>")[1:]
            assert len(items) == len(dates), feed
            for item in items:
                slug = re.search(r"/blog/([\w-]+)/</link>", item).group(1)
                when = re.search(r"<pubDate>([^<]+)</pubDate>", item).group(1)
                stamp = dates[slug].strftime("%a, %d %b %Y %H:%M:%S +0800")
                assert when == stamp, (feed, slug)


def test_posts_have_distinct_dates_in_track_order(site):
    """Each post its own date and time, a later point of a track a later one, the
    same in both languages: the post list, newest first, keeps the tracks' order
    instead of falling back to titles (15 of 17 posts once shared a day)."""
    from thousand.site import tracks

    when = _post_dates("en")
    assert _post_dates("zh") == when
    assert len(set(when.values())) == len(when), "two posts share a date"
    for track in tracks.tracks().values():
        mine = [p["id"] for p in track["points"] if p["id"] in when]
        assert sorted(mine, key=when.get) == mine, "a later point, an earlier date"
    newest = sorted(when, key=when.get, reverse=True)
    for lang, root in (("zh", site), ("en", site / "en")):
        slugs = {p: Path(x["uri"]).stem for p, x in tracks.written(DOCS[lang]).items()}
        index = (root / "blog" / "index.html").read_text()
        listed = []
        for article in index.split('<article class="md-post')[1:]:
            links = re.findall(r'href="([\w-]+)/"', article)
            listed += [s for s in links if s in slugs.values()][:1]
        assert listed and listed == [slugs[p] for p in newest][: len(listed)], lang


def test_tag_index_archive_and_categories_exist(site):
    for root in (site, site / "en"):
        tags = (root / "blog" / "tags" / "index.html").read_text()
        assert "CUDA" in tags
        assert list((root / "blog" / "archive").glob("*/index.html"))
        assert list((root / "blog" / "category").glob("*/index.html"))


def test_chinese_reading_time_counts_characters():
    from thousand.site.readtime import minutes

    assert minutes("<p>" + "字" * 255 * 10 + "</p>") == 10
    assert minutes("<p>" + "word " * 228 * 3 + "</p>") == 3
    # code is not read at prose speed
    assert minutes("<p>x</p><pre>" + "token " * 10_000 + "</pre>") == 1


def test_tracks_file_numbers_points_in_order_with_both_titles():
    from thousand.site import tracks

    for track, t in tracks.tracks().items():
        ids = [p["id"] for p in t["points"]]
        assert ids == [f"{track}{i}" for i in range(1, len(ids) + 1)]
        for p in t["points"]:
            assert isinstance(p["zh"], str) and p["zh"].strip(), p
            assert isinstance(p["en"], str) and p["en"].strip(), p


def test_math_is_typeset_while_building_and_no_page_loads_mathjax(site):
    """Every formula ships as MathJax's SVG (src/thousand/site/texsvg.py), so no
    page loads MathJax (2 MiB) and the site carries no copy of it; no formula is
    left as TeX."""
    from thousand.site import vendor

    if vendor.package_dir() is None:
        pytest.skip("no npm: the pages load MathJax from a CDN instead")
    formulas = 0
    for html in site.rglob("*.html"):
        text = html.read_text()
        assert "tex-svg.js" not in text, html
        for m in re.finditer(r'<(span|div) class="arithmatex">(.*?)</\1>', text, re.S):
            formulas += 1
            assert m.group(2).startswith("<mjx-container"), (html, m.group(2)[:80])
        if 'class="arithmatex"' in text:
            assert '<style id="tp-mathjax">' in text, html
    assert formulas > 200, formulas
    assert not list(site.rglob("tex-svg.js"))


def test_texsvg_fails_on_tex_mathjax_rejects_and_keeps_ids_apart():
    from thousand.site import texsvg, vendor

    package = vendor.package_dir()
    if package is None:
        pytest.skip("no npm: MathJax's package is not there to run")
    tex = texsvg.Renderer(package)
    try:
        page = (
            '<head></head><p><span class="arithmatex">\\(x &lt; y\\)</span> '
            '<span class="arithmatex">\\(x &lt; y\\)</span></p>'
            '<div class="arithmatex">\\[\\frac{a}{b}\\]</div>'
        )
        out = tex.page(page, "t.md")
        assert out.count("<mjx-container") == 3
        assert out.count('jax="SVG" display="true"') == 1  # the div only
        assert "\\(" not in out and "<mo>&lt;</mo>" in out
        # the same formula twice on a page: its glyphs' ids differ
        ids = re.findall(r'<path id="([^"]+)"', out)
        assert len(ids) == len(set(ids)) > 3
        with pytest.raises(texsvg.TexError, match="Undefined control sequence"):
            tex.page('<span class="arithmatex">\\(\\nosuchmacro x\\)</span>', "t.md")
    finally:
        tex.close()


def test_search_index_and_mermaid_wait_for_the_reader(site):
    """No page asks for the search index or Mermaid while it loads: the stand-ins
    (docs/overrides/javascripts/lazy-*.js) come before Material's bundle; the
    browser test checks that search and diagrams still work."""
    for page in (site / "index.html", site / "en/blog/why-gpu/index.html"):
        text = page.read_text()
        assert text.index("lazy-search.js") < text.index("assets/javascripts/bundle.")
    why = (site / "blog/why-gpu/index.html").read_text()
    assert '<pre class="mermaid">' in why
    assert why.index("lazy-mermaid.js") < why.index("assets/javascripts/bundle.")
    assert not re.search(r'<script src="[^"]*mermaid\.min\.js"', why)


def test_pages_describe_themselves_and_name_a_default_language(site, site_url):
    """No two pages of a language share a description (the site's own was on 22 of
    each: the blog's lists, the tracks, the notebook...); every page names the
    Chinese copy as x-default; the home page's preview title is the site's name,
    and English titles lead with the English name."""
    for lang, root in (("zh", site), ("en", site / "en")):
        seen: dict[str, str] = {}
        for html_path in root.rglob("*.html"):
            rel = html_path.relative_to(root).as_posix()
            if lang == "zh" and rel.startswith("en/"):
                continue
            text = html_path.read_text()
            if rel != "404.html":
                d = re.search(r'<meta name="description" content="([^"]+)"', text)
                assert d, rel
                twin = seen.get(d.group(1))
                assert twin is None, f"{lang}: {rel} and {twin}"
                seen[d.group(1)] = rel
            zh = re.search(r'<link rel="alternate" href="([^"]+)" hreflang="zh">', text)
            default = re.findall(
                r'<link rel="alternate" href="([^"]+)" hreflang="x-default">', text
            )
            assert default == [zh.group(1)], f"{lang}/{rel}: {default}"
        assert len(seen) > 40, lang
        home = (root / "index.html").read_text()
        name = (
            "一千个知识点 · A Thousand Points"
            if lang == "zh"
            else ("A Thousand Points · 一千个知识点")
        )
        assert f'<meta property="og:title" content="{name}">' in home
        post = (root / "blog" / "why-gpu" / "index.html").read_text()
        assert re.search(r"<title>[^<]* - " + re.escape(name) + "</title>", post)


def test_the_feeds_stylesheet_speaks_the_feeds_language(site):
    from xml.dom import minidom

    for lang, root, words, other in (
        ("zh", site, "阅读全文", "Read the post"),
        ("en", site / "en", "Read the post", "阅读全文"),
    ):
        feed = (root / "feed_rss_created.xml").read_text()
        assert '<?xml-stylesheet type="text/xsl" href="rss.xsl"?>' in feed
        xsl = (root / "rss.xsl").read_text()
        minidom.parseString(xsl.encode())  # well-formed
        assert words in xsl and other not in xsl and "Par " not in xsl, lang


def test_chart_text_writes_powers_as_superscripts(site):
    """Charts write 2²⁶ as the pages do, not 2^26."""
    plots = [*site.glob("assets/plots/*.svg"), *site.glob("en/assets/plots/*.svg")]
    assert len(plots) > 20
    for svg in plots:
        texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg.read_text())
        assert not [t for t in texts if re.search(r"\d\^", t)], svg.name


def test_pages_install_with_the_shared_commands_only(site):
    """Every page writes the install for a GPU and for no GPU from
    docs/includes/install.sh, never by hand (they drifted into five spellings); a
    test extra is named only for running a test."""
    for lang, docs in DOCS.items():
        for page in docs.rglob("*.md"):
            if page.name == "contributing.md":  # a contributor's setup, not a reader's
                continue
            for line in page.read_text().splitlines():
                if "pip install -e" in line:
                    assert '".[test]"' in line, f"{lang}/{page.name}: {line[:80]}"
    include = (ROOT / "docs" / "includes" / "install.sh").read_text()
    gpu = re.search(r"\[start:gpu\]\n(.*?)# --8<-- \[end:gpu\]", include, re.S)
    assert gpu.group(1).strip() == 'pip install -e ".[gpu,snippets]"'
    page = unescape(re.sub(r"<[^>]+>", "", (site / "en" / "index.html").read_text()))
    assert 'pip install -e ".[gpu,snippets]"' in page
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in page


def test_posts_name_their_repository_above_the_commands():
    from thousand.site import repo

    post = (
        '<h1>T</h1><h2 id="run-it-yourself">Run it yourself<a class="headerlink" '
        'href="#run-it-yourself">&para;</a></h2><p>You need</p>'
    )
    shown = repo.add(post, "https://github.com/o/r", "en")
    assert '</h2>\n<p class="tp-repo">' in shown
    assert '<a href="https://github.com/o/r">github.com/o/r</a>' in shown
    assert repo.add(post, None, "en") == post  # no address: nothing made up
    zh = post.replace("Run it yourself", "自己跑一遍")
    assert "代码在仓库" in repo.add(zh, "https://github.com/o/r", "zh")


def test_a_local_build_takes_the_repository_from_the_clones_origin(tmp_path):
    import subprocess

    from thousand.site import repo

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert repo.from_git(tmp_path) is None
    remote = ["remote", "add", "origin", "git@github.com:o/r.git"]
    subprocess.run(["git", "-C", str(tmp_path), *remote], check=True)
    assert repo.from_git(tmp_path) == "https://github.com/o/r"


def test_every_post_links_its_notebook_which_lies_beside_it(site):
    """Both languages: every post carries the notebook line under its title, and the
    file it links is a notebook of that post (its title first, its snippets in it);
    Open in Colab is there exactly where the build knows a GitHub repository, and
    otherwise one line says why."""
    nbformat = pytest.importorskip("nbformat")
    for lang, root in (("zh", site), ("en", site / "en")):
        posts = sorted((DOCS[lang] / "blog" / "posts").glob("*.md"))
        assert posts
        for post in posts:
            page = root / "blog" / post.stem / "index.html"
            html = page.read_text(encoding="utf-8")
            line = re.search(r'<p class="tp-notebook">(.*?)</p>', html, re.S)
            assert line, f"{lang}: {post.stem} has no notebook line"
            title_end = html.index("</h1>")
            assert html.index('<p class="tp-notebook">') > title_end
            href = re.search(r'class="md-button tp-nb-download" href="([^"]+)"', html)
            assert href and href.group(1) == f"{post.stem}.ipynb"
            nb = nbformat.read(page.parent / href.group(1), as_version=4)
            nbformat.validate(nb)
            title = re.search(r"^# (.+)$", post.read_text(encoding="utf-8"), re.M)
            assert nb.cells[0].source == f"# {title.group(1).strip()}"
            whole = re.findall(
                r'^```python\n--8<-- "snippets/\w+\.py"\n```$', post.read_text(), re.M
            )
            code = [c for c in nb.cells if c.cell_type == "code"]
            assert len(code) == 1 + len(whole)  # the set-up, then each snippet
            colab = "tp-nb-colab" in line.group(1)
            assert colab != ("tp-nb-why" in line.group(1)), line.group(1)
            if colab:
                assert f"/blob/notebooks/{lang}/{post.stem}.ipynb" in line.group(1)
