"""The built site in a real browser (headless Chromium through Playwright): every page
loads without console errors or failed requests, internal links and their #anchors
resolve, the language switch lands on the same page, search finds posts in Chinese
and in English, math and diagrams render, and every page reads at a phone's width
(formulas, page width, navigation, chart text). Screenshots of the home page and a
post in each language go to $THOUSAND_SCREENSHOTS (or a temporary folder).

One browser for the module; every page is visited once (the `visits` fixture), and
the tests below read what that pass saw.

Without Chromium or Playwright this module skips with the reason; with CI=true it
fails instead, so CI cannot pass without having looked.
"""

import base64
import math
import os
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

import pytest

from tests.helpers import unavailable
from thousand.site import browser as B

# One worker builds the site once (a minute) and runs every test that reads it.
pytestmark = pytest.mark.xdist_group("site")

LANGS = {"zh": "", "en": "en/"}
POST = "blog/why-gpu/"
SHOTS = {"home": "", "post": POST}  # screenshotted in each language


@pytest.fixture(scope="module")
def base_url(built_site, site_url):
    port = int(site_url.rstrip("/").rsplit(":", 1)[1])
    with B.serve(built_site, port) as url:
        assert url == site_url
        yield url


@pytest.fixture(scope="module")
def chromium():
    try:
        with B.chromium() as browser:
            yield browser
    except B.NoBrowser as e:
        unavailable(str(e))


def _open(chromium, width: int = 1280):
    """A fresh context and page that list what went wrong: console errors, uncaught
    errors, requests that failed or came back >= 400."""
    context = chromium.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.problems = []
    say = page.problems.append
    page.on("console", lambda m: m.type == "error" and say(f"console: {m.text}"))
    page.on("pageerror", lambda e: say(f"page error: {e}"))
    page.on("requestfailed", lambda r: say(f"request failed: {r.url} {r.failure}"))
    page.on("response", lambda r: r.status >= 400 and say(f"HTTP {r.status}: {r.url}"))
    page.inflight, page.events = set(), [0]  # for _settle

    def start(r):
        page.inflight.add(r)
        page.events[0] += 1

    def end(r):
        page.inflight.discard(r)
        page.events[0] += 1

    page.on("request", start)
    page.on("requestfinished", end)
    page.on("requestfailed", end)
    return context, page


def _settle(page, quiet_ms: int = 200, limit_ms: int = 15_000) -> None:
    """Wait until no request has started or been in flight for `quiet_ms`: the late
    ones (sitemaps, the search index, the favicon) are seen too. Playwright's
    networkidle waits 500 ms, which over some 40 page loads costs 12 s more."""
    quiet = waited = 0
    last = page.events[0]
    while quiet < quiet_ms:
        page.wait_for_timeout(50)  # the event handlers above run meanwhile
        waited += 50
        busy = page.inflight or page.events[0] != last
        last = page.events[0]
        quiet = 0 if busy else quiet + 50
        if waited > limit_ms:
            raise TimeoutError(f"{page.url}: still loading {list(page.inflight)}")


def _load(page, url: str) -> None:
    page.goto(url, wait_until="load")
    _settle(page)


@pytest.fixture
def page(chromium):
    context, page = _open(chromium)
    yield page
    context.close()


def _pages(site: Path) -> list[str]:
    """Every HTML page of both languages, as a URL path relative to the site root."""
    paths = []
    for p in site.rglob("*.html"):
        rel = p.relative_to(site).as_posix()
        paths.append(rel.removesuffix("index.html"))
    return sorted(paths)


@dataclass
class Visit:
    problems: list[str]
    ids: set[str]
    links: list[str]  # absolute URLs of every <a href>
    math: dict | None = None  # on pages with .arithmatex: blocks, typeset, errors
    diagrams: list[str] = field(default_factory=list)  # per diagram: what it became
    tables: int = 0
    wide_tables: list[str] = field(default_factory=list)  # wider than their column
    phone: dict = field(default_factory=dict)  # at a phone's width: see PHONE_CHECK


# Tables that scroll sideways inside their box (Material's wrapper) at this width:
# wider than the text column they sit in.
WIDE_TABLES = """() => {
  const tables = [...document.querySelectorAll('article table')];
  return [tables.length, tables.filter(t => {
    const box = t.closest('.md-typeset__scrollwrap') || t.parentElement;
    return box.scrollWidth > box.clientWidth + 1;
  }).map(t => `${Math.round(t.getBoundingClientRect().width)} px in ` +
    `${Math.round(t.closest('.md-typeset__scrollwrap, article').clientWidth)} px: ` +
    t.rows[0].innerText.replace(/\\s+/g, ' ').slice(0, 60))];
}"""


# Every .arithmatex holds MathJax's output (typeset while the site was built:
# src/thousand/site/texsvg.py); any [data-mjx-error] is TeX it rejected, and no
# formula shows its TeX (its text is the hidden MathML's, without backslashes).
MATH = r"""() => ({
  blocks: document.querySelectorAll('.arithmatex').length,
  typeset: document.querySelectorAll('.arithmatex mjx-container').length,
  errors: [...new Set([...document.querySelectorAll('.arithmatex [data-mjx-error]')]
    .map(e => e.getAttribute('data-mjx-error')))],
  tex: [...document.querySelectorAll('.arithmatex')]
    .filter(e => /\\[()[\]]|\$\$/.test(e.textContent)).length,
})"""
MATH_DONE = "() => { const m = (" + MATH + ")(); return m.typeset === m.blocks }"


def _attrs(node) -> dict[str, str]:
    flat = node.get("attributes", [])  # name, value, name, value, ...
    return dict(zip(flat[::2], flat[1::2], strict=True))


def _walk(node):
    yield node
    for child in node.get("children", []) + node.get("shadowRoots", []):
        yield from _walk(child)


SCROLL_TO_DIAGRAMS = """async () => {
  for (const pre of [...document.querySelectorAll('pre.mermaid')]) {
    pre.scrollIntoView();
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  }
  window.scrollTo(0, 0);
}"""


def _diagrams(page, expected: int) -> list[str]:
    """What each of the page's `expected` diagrams became. Material takes the class
    `mermaid` off each <pre> until it has drawn it into a <div class=mermaid>, inside
    a *closed* shadow root that page scripts cannot open; the DevTools protocol can
    (pierce). A diagram that was never drawn leaves no .mermaid at all. Mermaid
    loads when a diagram nears the viewport (docs/overrides/javascripts/
    lazy-mermaid.js): each diagram is scrolled into view first."""
    page.evaluate(SCROLL_TO_DIAGRAMS)
    try:
        page.wait_for_function(
            f"() => document.querySelectorAll('div.mermaid').length >= {expected}",
            timeout=10_000,
        )
    except Exception:
        pass  # counted below as not drawn
    cdp = page.context.new_cdp_session(page)
    root = cdp.send("DOM.getDocument", {"depth": -1, "pierce": True})["root"]
    cdp.detach()
    found = []
    for node in _walk(root):
        if "mermaid" not in _attrs(node).get("class", "").split():
            continue
        svgs = [
            _attrs(n)
            for shadow in node.get("shadowRoots", [])
            for n in _walk(shadow)
            if n.get("nodeName", "").lower() == "svg"
        ]
        if not svgs:
            found.append("no svg")
        elif svgs[0].get("aria-roledescription") == "error":  # Mermaid's syntax error
            found.append("error diagram")
        else:
            found.append("svg")
    return found + ["not drawn"] * (expected - len(found))


@pytest.fixture(scope="module")
def screenshot_dir(tmp_path_factory) -> Path:
    out = os.environ.get("THOUSAND_SCREENSHOTS")
    out = Path(out) if out else tmp_path_factory.mktemp("screenshots")
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture(scope="module")
def visits(built_site, base_url, chromium, screenshot_dir) -> dict[str, Visit]:
    """Load every page once, in one page of one context, and record what it did."""
    shots = {
        LANGS[lang] + path: screenshot_dir / f"{lang}-{name}.png"
        for lang in LANGS
        for name, path in SHOTS.items()
    }
    context, page = _open(chromium)
    seen = {}
    for path in _pages(built_site):
        html = built_site / (path if path.endswith(".html") else path + "index.html")
        diagrams = html.read_text().count('<pre class="mermaid">')  # as built
        page.problems.clear()
        _load(page, urljoin(base_url, path))
        visit = Visit(
            problems=list(page.problems),
            ids=set(page.eval_on_selector_all("[id]", "e => e.map(x => x.id)")),
            links=page.eval_on_selector_all("a[href]", "e => e.map(a => a.href)"),
        )
        visit.ids |= set(
            page.eval_on_selector_all("a[name]", "e => e.map(a => a.name)")
        )
        if page.locator(".arithmatex").count():
            try:
                page.wait_for_function(MATH_DONE, timeout=10_000)
            except Exception:
                pass  # recorded below as blocks != typeset
            visit.math = page.evaluate(MATH)
        if diagrams:
            visit.diagrams = _diagrams(page, diagrams)
        visit.tables, visit.wide_tables = page.evaluate(WIDE_TABLES)
        if path in shots:
            page.screenshot(path=str(shots[path]), full_page=True)
        # the same page narrowed to a phone's width (no second load: the layout
        # follows the viewport), then widened again for the next page
        page.set_viewport_size({"width": PHONE, "height": 900})
        visit.phone = page.evaluate(PHONE_CHECK)
        visit.phone["charts"] = page.evaluate(CHART_TEXT)
        if path.startswith(("benchmarks/", "en/benchmarks/")):
            visit.phone["bars"] = page.evaluate(BARS_CHECK)
        page.set_viewport_size({"width": 1280, "height": 900})
        visit.problems += page.problems[len(visit.problems) :]  # while rendering
        seen[path] = visit
    context.close()
    return seen


def test_every_page_loads_cleanly(visits):
    assert len(visits) > 20, sorted(visits)
    problems = [f"/{path}: {p}" for path, v in visits.items() for p in v.problems]
    assert not problems, "\n".join(problems)


def test_internal_links_and_anchors_resolve(visits, base_url):
    ids = {urljoin(base_url, path): v.ids for path, v in visits.items()}
    links: dict[str, str] = {}  # internal link -> the first page it was found on
    for path, v in visits.items():
        for href in v.links:
            if href.startswith(base_url):
                links.setdefault(href, "/" + path)
    broken = []
    for href, found_on in sorted(links.items()):
        target, fragment = urldefrag(href)
        fragment = unquote(fragment)
        if fragment.startswith("__code_"):  # code annotations: Material's script
            fragment = ""  # turns their targets into tooltips
        if target in ids:  # a page: it loaded above; the anchor must be on it
            if fragment and fragment not in ids[target]:
                broken.append(f"{found_on}: {href} (no id {fragment!r})")
            continue
        try:  # a file rather than a page: a feed, a download, an SVG
            with urllib.request.urlopen(target) as r:
                assert r.status == 200, (found_on, href, r.status)
        except urllib.error.HTTPError as e:
            broken.append(f"{found_on}: {href} ({e.code})")
    assert links
    assert not broken, "broken internal links:\n" + "\n".join(broken)


def test_math_renders(visits):
    with_math = {path: v.math for path, v in visits.items() if v.math}
    assert with_math, "no page has math (.arithmatex) to check"
    bad = [
        f"/{path}: {m['typeset']} of {m['blocks']} typeset, errors {m['errors']}, "
        f"{m['tex']} showing TeX"
        for path, m in with_math.items()
        if m["typeset"] != m["blocks"] or m["errors"] or m["tex"]
    ]
    assert not bad, "\n".join(bad)


def test_tables_fit_their_column_at_desktop_width(visits):
    """At 1280 px no table is wider than the text column (688 px): Material's
    minimum header width once put a nine-column ladder at 950 px, its last
    columns out of sight (docs/overrides/stylesheets/extra.css). On a phone a wide
    table scrolls in its box, its first column held in view."""
    assert sum(v.tables for v in visits.values()) > 200
    wide = [f"/{path}: {t}" for path, v in visits.items() for t in v.wide_tables]
    assert not wide, "\n".join(wide)


# A phone's width (an iPhone 14's 390 CSS pixels). `visits` narrows every page it
# loads to this width and looks again (`phone_visits`): every display formula
# keeps a readable size (it collapsed to 1 x 1 px once), no page is wider than the
# screen, the navigation shows no TeX, and the text of every chart drawn as SVG
# (assets/plots, assets/access) is at least charts.LEGIBLE_PX CSS px as shown.
PHONE = 390
PHONE_CHECK = r"""() => ({
  collapsed: [...document.querySelectorAll('div.arithmatex > mjx-container > svg')]
    .filter(s => s.getBoundingClientRect().width < 4).length,
  width: document.documentElement.scrollWidth,
  tex: [...document.querySelectorAll('.md-nav__link, .md-nav__title, .md-tabs__link')]
    .map(a => a.textContent.trim()).filter(t => /\\[()[\]]|\$[^$\s]/.test(t)),
})"""
# Each chart's SVG holds its text as <text> with a font size in its own units
# (site.charts); shown at the image's width, the smallest must be legible. Set by
# the browser (the SVG placed in the page, out of sight), no text may run past the
# chart's edges, where an <img> cuts it off, nor over another text (crowded ticks).
CHART_TEXT = """async () => {
  const out = [];
  for (const img of document.querySelectorAll('article img')) {
    const src = img.currentSrc || img.src;
    if (!/\\/assets\\/(plots|access)\\/[^/]+\\.svg$/.test(src)) continue;
    const svg = new DOMParser().parseFromString(
      await (await fetch(src)).text(), 'image/svg+xml').documentElement;
    const units = parseFloat((svg.getAttribute('viewBox') || '').split(/\\s+/)[2]);
    const sizes = [...svg.querySelectorAll('text')].map(t => parseFloat(
      ((t.getAttribute('style') || '').match(/font-size:\\s*([\\d.]+)px/) || [])[1]));
    const shown = img.getBoundingClientRect().width;
    const px = sizes.length ? Math.min(...sizes) * shown / units : 0;
    const held = document.createElement('div');
    held.style.cssText = 'position:absolute;left:-9999px;top:0';
    held.appendChild(document.importNode(svg, true));
    document.body.appendChild(held);
    const edge = held.firstChild.getBoundingClientRect();
    const cut = [...held.querySelectorAll('text')].filter(t => {
      const r = t.getBoundingClientRect();
      return r.width && (r.left < edge.left - 1 || r.right > edge.right + 1 ||
                         r.top < edge.top - 1 || r.bottom > edge.bottom + 1);
    }).map(t => t.textContent.trim()).slice(0, 3);
    const boxes = [...held.querySelectorAll('text')]
      .map(t => [t.textContent.trim(), t.getBoundingClientRect()])
      .filter(([s, r]) => s && r.width);
    const k = shown / edge.width;  // the held SVG is at its own size
    const crowded = [];
    boxes.forEach(([s, a], i) => boxes.slice(i + 1).forEach(([u, b]) => {
      const x = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const y = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (x * k > -3 && y > 1) crowded.push(s + " / " + u);  // < 3 px apart shown
    }));
    held.remove();
    out.push([src.split('/').pop(), px, cut, crowded.slice(0, 3)]);
  }
  return out;
}"""


@pytest.fixture(scope="module")
def phone_visits(visits) -> dict[str, dict]:
    """Every page at a phone's width (`visits` narrows each page it loads): what
    PHONE_CHECK, CHART_TEXT and, on the benchmarks pages, BARS_CHECK found."""
    return {path: v.phone for path, v in visits.items()}


def test_every_page_reads_at_phone_width(phone_visits):
    """No collapsed formula, nothing wider than the screen, no TeX in the
    navigation, on every page of both languages."""
    assert len(phone_visits) > 20
    bad = [
        f"/{path}: {f['collapsed']} collapsed formulas, {f['width']} px wide, "
        f"TeX in the navigation: {f['tex'][:3]}"
        for path, f in phone_visits.items()
        if f["collapsed"] or f["width"] > PHONE or f["tex"]
    ]
    assert not bad, "\n".join(bad)


def test_chart_text_reads_at_phone_width(phone_visits):
    from thousand.site.charts import LEGIBLE_PX

    charts = [(path, *c) for path, f in phone_visits.items() for c in f["charts"]]
    assert len(charts) > 50, len(charts)
    small = [
        f"/{path}: {name}: smallest text {px:.1f} px"
        for path, name, px, *_ in charts
        if px < LEGIBLE_PX
    ]
    assert not small, "\n".join(small)


def test_chart_text_stays_inside_the_chart(phone_visits):
    charts = [(path, *c) for path, f in phone_visits.items() for c in f["charts"]]
    cut = [f"/{path}: {name}: {texts}" for path, name, _, texts, _ in charts if texts]
    assert not cut, "text past a chart's edge:\n" + "\n".join(cut)
    crowded = [f"/{path}: {name}: {pairs}" for path, name, *_, pairs in charts if pairs]
    assert not crowded, "texts over each other:\n" + "\n".join(crowded)


# The benchmarks pages' bar charts are HTML (src/thousand/site/benchmarks.py): at a
# phone's width their text keeps a readable size, rows and axis labels stay on the
# screen and clear of each other, and no figure is cut.
BARS_CHECK = """() => {
  const px = e => parseFloat(getComputedStyle(e).fontSize);
  const text = [...document.querySelectorAll(
    '.tp-bars__label, .tp-bars__value, .tp-bars__tick, .tp-bars figcaption')];
  const rows = [...document.querySelectorAll('.tp-bars__row')];
  const ticks = [...document.querySelectorAll('.tp-bars__axis')].map(a =>
    [...a.querySelectorAll('.tp-bars__tick')].map(t => t.getBoundingClientRect()));
  return {
    charts: document.querySelectorAll('figure.tp-bars').length,
    small: text.filter(e => px(e) < 11).map(e => e.textContent).slice(0, 5),
    outside: rows.filter(r => r.getBoundingClientRect().right > innerWidth).length,
    cut: [...document.querySelectorAll('.tp-bars__value')]
      .filter(v => v.scrollWidth > v.clientWidth + 1).map(v => v.textContent),
    crowded: ticks.filter(ts => ts.some((t, i) => i && t.left < ts[i - 1].right))
      .length,
  };
}"""


def test_benchmark_charts_read_at_phone_width(phone_visits):
    bad, charts = [], 0
    for path, f in phone_visits.items():
        if "bars" not in f:
            continue
        found = dict(f["bars"])
        charts += found.pop("charts")
        if any(found.values()):
            bad.append(f"/{path}: {found}")
    assert charts > 100, charts
    assert not bad, "\n".join(bad)


def test_diagrams_render(visits):
    with_diagrams = {path: v.diagrams for path, v in visits.items() if v.diagrams}
    assert with_diagrams, "no page has a Mermaid diagram to check"
    bad = [
        f"/{path}: {d}" for path, ds in with_diagrams.items() for d in ds if d != "svg"
    ]
    assert not bad, "\n".join(bad)


def test_screenshots(visits, screenshot_dir, capsys):
    shots = [screenshot_dir / f"{lang}-{name}.png" for lang in LANGS for name in SHOTS]
    for shot in shots:
        assert shot.stat().st_size > 10_000, shot
    with capsys.disabled():  # the paths, even without -s
        print("\nscreenshots: " + " ".join(map(str, shots)))


@pytest.mark.parametrize(
    "path", ["", "blog/", POST, "tracks/cuda/", "benchmarks/matrix-multiplication/"]
)
def test_language_switch_lands_on_the_same_page(base_url, page, path):
    # zh -> en, then back from where that landed. Settled before each click, Material
    # has fetched both sitemaps and handles the click itself, keeping the path only
    # if the other language's sitemap lists it.
    _load(page, base_url + LANGS["zh"] + path)
    for there in ("en", "zh"):
        page.hover(".md-header__option .md-select")
        page.click(f'.md-select__link[hreflang="{there}"]')
        page.wait_for_url(base_url + LANGS[there] + path)
        _settle(page)


RESULTS = """() => [...document.querySelectorAll('.md-search-result__item a')]
  .map(a => new URL(a.href).pathname)"""


def _search(base_url, page, lang: str, query: str, want: str) -> list[str]:
    """Type `query` into the search box; once `want` is listed, every result's
    path in the order shown (a post's sections follow it)."""
    from playwright.sync_api import expect  # importable: the page fixture needed it

    # the index is fetched once the reader turns to search, not with the page
    # (docs/overrides/javascripts/lazy-search.js)
    asked = []
    page.on("request", lambda r: "search_index.json" in r.url and asked.append(r))
    page.goto(base_url + LANGS[lang], wait_until="networkidle")
    assert not asked, "the search index was fetched before anyone searched"
    if page.viewport_size["width"] < 960:  # a phone: the box opens from its icon
        page.click('.md-header label[for="__search"]')
    page.click(".md-search__input")
    # The box reads queries only once the worker has the index, which it says.
    ready = {"zh": "键入以开始搜索", "en": "Type to start searching"}[lang]
    expect(page.locator(".md-search-result__meta")).to_have_text(ready)
    page.keyboard.type(query)  # Chinese arrives as text input, with no key events;
    page.keyboard.press("End")  # an IME ends with a key release, which Material reads
    want = urlsplit(base_url).path + LANGS[lang] + want
    try:  # results are redrawn as they come: poll, then read them in one go
        page.wait_for_function(
            f"() => ({RESULTS})().includes({want!r})", timeout=10_000
        )
    except Exception:
        meta = page.locator(".md-search-result__meta").inner_text()
        found = sorted(set(page.evaluate(RESULTS)))
        pytest.fail(f"{query!r} did not list {want}; the search says {meta!r}: {found}")
    page.wait_for_timeout(300)  # the last redraw
    prefix = urlsplit(base_url).path + LANGS[lang]
    return [p.removeprefix(prefix) for p in dict.fromkeys(page.evaluate(RESULTS))]


@pytest.mark.parametrize(
    "lang, query, post",
    [
        ("zh", "线程块", "blog/why-gpu/"),
        ("zh", "纤程", "blog/cuda-on-cpu/"),
        ("en", "coalesced", "blog/why-gpu/"),
        ("en", "fibers", "blog/cuda-on-cpu/"),
    ],
)
def test_search_finds_the_post(base_url, page, lang, query, post):
    _search(base_url, page, lang, query, post)
    if lang == "zh":  # segmented as one word (docs/jieba_userdict.txt), not pieces
        marks = page.eval_on_selector_all(
            ".md-search-result mark", "m => m.map(x => x.textContent.trim())"
        )
        assert query in marks, marks[:10]


def test_search_ranks_the_post_on_a_chinese_term_first(base_url, page):
    """Material's worker cut "张量核心" into "张量* 核*" (it never looked up a slice
    ending at the query's last character), and "核*" matched the 核心思想 heading
    every post has: the MLP post came first. src/thousand/site/search.py mends it."""
    found = _search(base_url, page, "zh", "张量核心", "blog/matrix-multiplication/")
    assert found[0] == "blog/matrix-multiplication/", found[:5]


@pytest.mark.parametrize(
    "lang, query, post",
    [
        # past the shown part of their section: found through the hidden field
        ("en", "Zisserman", "blog/alexnet-and-vgg/"),
        ("zh", "自由度", "blog/alexnet-and-vgg/"),
    ],
)
def test_search_results_are_short_and_find_the_hidden_rest(
    base_url, chromium, screenshot_dir, lang, query, post
):
    """A result shows a few lines of prose, never a code listing or raw TeX, at a
    phone's width; what is cut from it is still searched."""
    context, page = _open(chromium, width=390)
    try:
        _search(base_url, page, lang, query, post)
        heights = page.eval_on_selector_all(
            ".md-search-result__article",
            "e => e.map(x => x.getBoundingClientRect().height)",
        )
        texts = page.eval_on_selector_all(
            ".md-search-result__item", "e => e.map(x => x.innerText)"
        )
        page.screenshot(path=str(screenshot_dir / f"search-{lang}-390.png"))
        assert heights and max(heights) < 400, heights  # each page, each section
        assert not any("\\(" in t or "\\[" in t for t in texts)
        assert page.locator(".md-search-result pre").count() == 0
    finally:
        context.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_post_table_of_contents_on_a_phone_and_on_a_desktop(
    base_url, chromium, screenshot_dir, lang
):
    """At 390 px the sidebar's table of contents is hidden: the post's own "On this
    page" block shows closed under the title, opens to the sections, and a link
    goes to its section. At 1280 px the block is hidden and the sidebar shows."""
    url = base_url + LANGS[lang] + "blog/memory-hierarchy/"
    context, page = _open(chromium, width=390)
    try:
        _load(page, url)
        block = page.locator("details.tp-toc")
        assert block.is_visible()
        assert not page.locator(".md-sidebar--secondary").is_visible()
        links = block.locator("a")
        assert not links.first.is_visible()  # closed until asked
        block.locator("summary").click()
        assert links.count() >= 8 and links.nth(3).is_visible()
        target = links.nth(3).get_attribute("href")
        links.nth(3).click()
        page.wait_for_timeout(300)
        assert unquote(page.evaluate("location.hash")) == target
        top = page.locator(target).evaluate("e => e.getBoundingClientRect().top")
        assert 0 <= top < 200, top
        assert not page.problems, page.problems
        block.evaluate("e => e.scrollIntoView()")
        page.screenshot(path=str(screenshot_dir / f"toc-{lang}-390.png"))
    finally:
        context.close()
    context, page = _open(chromium, width=1280)
    try:
        _load(page, url)
        assert not page.locator("details.tp-toc").is_visible()
        assert page.locator(".md-sidebar--secondary").is_visible()
    finally:
        context.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_post_table_of_contents_in_the_drawer_from_anywhere(
    base_url, chromium, screenshot_dir, lang
):
    """Far down a post on a phone, the header's menu opens the drawer on the blog's
    section with "On this page" first; it opens the post's sections, a tap goes to
    one and closes the drawer (Chinese anchors too: Material looked the section up
    by its percent-encoded id and left the drawer open). At 1280 px the entry is
    out of sight: the drawer is not used there and the sidebar shows the sections."""
    from playwright.sync_api import expect  # importable: the chromium fixture needed it

    url = base_url + LANGS[lang] + "blog/memory-hierarchy/"
    context, page = _open(chromium, width=PHONE)
    try:
        _load(page, url)
        page.mouse.wheel(0, 8000)
        page.wait_for_timeout(300)
        page.click('.md-header label[for="__drawer"]')
        entry = page.locator('.md-nav--primary .md-nav__link[for="__toc"]')
        expect(entry).to_be_visible()
        entry.click()
        links = page.locator(".md-nav--primary .md-nav--secondary a")
        expect(links.nth(3)).to_be_visible()
        # the sections' panel has slid in: the link lies inside the screen
        links.nth(3).evaluate(
            """a => new Promise(done => { const look = () => {
                 const r = a.getBoundingClientRect();
                 r.left >= 0 && r.right <= innerWidth ? done() : setTimeout(look, 50);
               }; look(); })"""
        )
        page.wait_for_timeout(300)  # the slide's end, for the screenshot
        page.screenshot(path=str(screenshot_dir / f"drawer-toc-{lang}-390.png"))
        target = links.nth(3).get_attribute("href")
        links.nth(3).click()
        page.wait_for_timeout(500)
        assert unquote(page.evaluate("location.hash")) == target
        assert not page.evaluate("document.getElementById('__drawer').checked")
        top = page.locator(target).evaluate("e => e.getBoundingClientRect().top")
        assert 0 <= top < 200, top
        assert not page.problems, page.problems
    finally:
        context.close()
    context, page = _open(chromium, width=1280)
    try:
        _load(page, url)
        assert not page.locator('.md-nav__link[for="__toc"]').is_visible()
        assert page.locator(".md-sidebar--secondary").is_visible()
    finally:
        context.close()


# The pixels of a PNG as the browser decodes them (no image library needed).
PIXELS = """async src => {
  const img = new Image();
  img.src = src;
  await img.decode();
  const c = document.createElement('canvas');
  [c.width, c.height] = [img.width, img.height];
  const g = c.getContext('2d');
  g.drawImage(img, 0, 0);
  return [img.width, Array.from(g.getImageData(0, 0, img.width, img.height).data)];
}"""


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("width", [1280, PHONE])
def test_the_logo_stands_out_from_the_indigo_header(base_url, chromium, lang, width):
    """The logo is an indigo disc: on the indigo header (1280 px) and the drawer's
    indigo title (a phone) its edge vanished. Just outside the disc, all round,
    the pixels are light against the header's indigo."""
    context, page = _open(chromium, width=width)
    try:
        _load(page, base_url + LANGS[lang])
        if width == PHONE:
            page.click('.md-header label[for="__drawer"]')
            page.wait_for_timeout(400)
            logo = page.locator(".md-nav--primary > .md-nav__title .md-logo img")
        else:
            logo = page.locator(".md-header .md-logo img")
        box = logo.bounding_box()
        pad = 4
        clip = {
            "x": box["x"] - pad,
            "y": box["y"] - pad,
            "width": box["width"] + 2 * pad,
            "height": box["height"] + 2 * pad,
        }
        png = base64.b64encode(page.screenshot(clip=clip)).decode()
        w, rgba = page.evaluate(PIXELS, "data:image/png;base64," + png)

        def luminance(x: float, y: float) -> float:
            i = 4 * (int(y) * w + int(x))
            r, g, b = rgba[i : i + 3]
            return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255

        header = luminance(0, 0)  # a corner: the header
        r = box["width"] / 2 + 1  # one pixel outside the disc
        c = pad + box["width"] / 2
        edge = [
            luminance(c + r * math.cos(a), c + r * math.sin(a))
            for a in (2 * math.pi * k / 24 for k in range(24))
        ]
        assert header < 0.35, header  # indigo
        assert min(edge) > header + 0.4, (header, sorted(edge)[:4])
    finally:
        context.close()


def _serve_the_root_404_for(page, base_url, *paths):
    """Answer each of `paths` as a host with one 404.html does: the root page."""
    root_404 = urllib.request.urlopen(base_url + "404.html").read()
    for path in paths:
        page.route(
            base_url + path,
            lambda route: route.fulfill(
                status=404, content_type="text/html", body=root_404
            ),
        )


def test_the_root_404_page_speaks_english_under_en(base_url, page):
    """GitHub Pages serves the root 404.html for every missing address: under /en/
    it hands over to the English 404 page, whose tabs and search are English too,
    and the address bar keeps the address the reader asked for; elsewhere it
    stays Chinese."""
    from playwright.sync_api import expect  # importable: the page fixture needed it

    page.goto(base_url + "404.html")
    assert page.locator("h1").filter(has_text="页面不存在").is_visible()
    assert not page.get_by_text("page not found").is_visible()
    _serve_the_root_404_for(page, base_url, "en/no-such-page/?from=here")
    asked = base_url + "en/no-such-page/?from=here"
    page.goto(asked)
    page.wait_for_url(asked)
    expect(page.locator("h1").filter(has_text="page not found")).to_be_visible()
    assert not page.get_by_text("页面不存在").is_visible()
    assert page.evaluate("document.documentElement.lang") == "en"
    tabs = page.locator(".md-tabs__link").all_inner_texts()
    assert "Learning paths" in [t.strip() for t in tabs], tabs
    assert page.locator(".md-search__input").get_attribute("placeholder") == "Search"
    home = page.locator("article a").first.get_attribute("href")
    assert home.endswith("/en/"), home
    # expected: the missing page's own 404 (as a response and in the console), and
    # the root page's script requests, cut short as it hands over
    problems = [p for p in page.problems if "404" not in p and "ERR_ABORTED" not in p]
    assert not problems, problems


def test_the_root_404_page_speaks_english_where_the_english_one_is_missing(
    base_url, page
):
    """Where /en/404.html is missing too, the host answers it with the root page
    again: that page shows its own English text, and asks no further."""
    from playwright.sync_api import expect

    asked = []
    page.on("request", lambda r: "404.html" in r.url and asked.append(r.url))
    _serve_the_root_404_for(page, base_url, "en/no-such-page/", "en/404.html?*")
    page.goto(base_url + "en/no-such-page/")
    page.wait_for_url(base_url + "en/404.html?*")
    page.wait_for_load_state("load")
    expect(page.locator("h1").filter(has_text="page not found")).to_be_visible()
    assert not page.get_by_text("页面不存在").is_visible()
    assert page.evaluate("document.documentElement.lang") == "en"
    assert len(asked) == 1, asked
    home = page.locator(".tp-404[lang=en] a").first.get_attribute("href")
    assert home.endswith("/en/"), home


@pytest.mark.parametrize(
    "lang, date",
    [("zh", r"\d{4} 年 \d{1,2} 月 \d{1,2} 日"), ("en", r"\d{1,2} [A-Z][a-z]{2} \d{4}")],
)
def test_the_feed_shows_each_items_date_and_image(base_url, chromium, lang, date):
    """The feed opened in a browser (its XSLT stylesheet, rss.xsl): every item has
    its date written out ("28Nov 2026" lost its space) and the image of each item
    that carries one (feedimages.py) loads and fits a phone's width."""
    import re

    context, page = _open(chromium, width=PHONE)
    try:
        feed = base_url + LANGS[lang] + "feed_rss_created.xml"
        page.goto(feed, wait_until="load")
        page.wait_for_selector("article")
        dates = page.locator("article time").all_inner_texts()
        assert dates and all(re.fullmatch(date, d.strip()) for d in dates), dates[:3]
        source = urllib.request.urlopen(feed).read().decode()
        enclosures = re.findall(r'<enclosure url="([^"]*)"', source)
        assert len(enclosures) >= 10, len(enclosures)
        shown = page.eval_on_selector_all(
            "article img",
            "l => l.map(i => [i.src, i.complete && i.naturalWidth > 0,"
            " i.getBoundingClientRect().right])",
        )
        assert [s for s, _, _ in shown] == enclosures
        assert all(loaded and right <= PHONE for _, loaded, right in shown), shown
        assert not page.problems, page.problems
    finally:
        context.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_host_device_diagram_reads_on_a_phone(base_url, chromium, lang):
    """why-gpu's sequence diagram is drawn narrow (short lines, a small margin), so
    that on a 390 px phone it is scaled to at least 0.8 of its size: its 16 px
    text shows at 12.8 px or more (it was 0.39 in English, about 6 CSS px)."""
    context, page = _open(chromium, width=PHONE)
    try:
        _load(page, base_url + LANGS[lang] + "blog/why-gpu/")
        assert _diagrams(page, 1) == ["svg"]
        cdp = page.context.new_cdp_session(page)
        root = cdp.send("DOM.getDocument", {"depth": -1, "pierce": True})["root"]
        svg = next(
            n
            for n in _walk(root)
            if n.get("nodeName", "").lower() == "svg"
            and _attrs(n).get("aria-roledescription") == "sequence"
        )
        drawn = float(_attrs(svg)["viewBox"].split()[2])
        shown = cdp.send("DOM.getBoxModel", {"nodeId": svg["nodeId"]})["model"]["width"]
        cdp.detach()
        assert shown / drawn >= 0.8, (lang, drawn, shown)
    finally:
        context.close()


OVERFLOWING = """() => [...document.querySelectorAll('div.arithmatex')]
  .filter(d => d.scrollWidth > d.clientWidth + 1).length"""


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_wide_formulas_are_broken_at_desktop_and_cued_on_a_phone(
    base_url, chromium, lang
):
    """The posts whose formulas ran past the 1280 px column break them in lines
    (gathered, aligned) and fit; on a phone a formula that still scrolls shows a
    shadow at the edge where more lies (covers that scroll with it, shadows that
    stay)."""
    posts = [
        "lenet-5",
        "execution-model",
        "multilayer-perceptron",
        "softmax-layernorm-attention",
        "perceptron",
    ]
    context, page = _open(chromium, width=1280)
    try:
        for post in posts:
            _load(page, base_url + LANGS[lang] + f"blog/{post}/")
            assert page.evaluate(OVERFLOWING) == 0, post
        page.set_viewport_size({"width": PHONE, "height": 900})
        page.wait_for_timeout(200)
        assert page.evaluate(OVERFLOWING) > 0  # the perceptron's, on a phone
        attach = page.eval_on_selector(
            "div.arithmatex", "d => getComputedStyle(d).backgroundAttachment"
        )
        assert attach.replace(" ", "") == "local,local,scroll,scroll"
    finally:
        context.close()


def test_a_post_prints_with_its_formulas_diagrams_and_code(base_url, chromium):
    """In print (and PDF) a post drops its own table of contents, fits every
    formula to the page instead of cutting it, and draws every diagram when the
    print begins (diagrams otherwise wait to be scrolled near); code wraps."""
    context, page = _open(chromium, width=794)  # A4 at 96 px an inch
    try:
        page.emulate_media(media="print")
        _load(page, base_url + "en/blog/lenet-5/")
        assert not page.locator("details.tp-toc").is_visible()
        assert not page.locator("p.tp-notebook").is_visible()  # nothing to press
        assert page.evaluate(OVERFLOWING) == 0
        wrap = "c => getComputedStyle(c).whiteSpace"
        assert page.eval_on_selector("pre > code", wrap) == "pre-wrap"
        page.set_viewport_size({"width": 794, "height": 300})  # the diagram far off
        _load(page, base_url + "en/blog/why-gpu/")
        drawn = "() => document.querySelectorAll('div.mermaid').length"
        assert page.evaluate(drawn) == 0
        page.evaluate("() => dispatchEvent(new Event('beforeprint'))")
        page.wait_for_function(
            "() => document.querySelectorAll('div.mermaid').length >= 1", timeout=15_000
        )
        assert len(page.pdf(format="A4")) > 10_000
    finally:
        context.close()


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_post_offers_its_notebook_under_its_title(
    base_url, chromium, screenshot_dir, lang, width
):
    """Under a post's title: the download button, which fetches that post's
    notebook, and Open in Colab where the build knows a GitHub repository (a local
    clone without one gets one line saying why instead). Every part sits inside the
    screen at 390 and 1280 px, in type no smaller than the page's small print, and
    the two buttons do not overlap."""
    import json

    url = base_url + LANGS[lang] + "blog/parallel-reduction/"
    context, page = _open(chromium, width=width)
    try:
        _load(page, url)
        line = page.locator("p.tp-notebook")
        assert line.count() == 1 and line.is_visible()
        h1 = page.locator(".md-content h1").first.bounding_box()
        box = line.bounding_box()
        assert 0 < box["y"] - h1["y"] < 300, (h1, box)  # right under the title
        parts = line.locator("a, span")
        boxes = []
        for i in range(parts.count()):
            part = parts.nth(i)
            assert part.is_visible()
            b = part.bounding_box()
            assert b["x"] >= 0 and b["x"] + b["width"] <= width, (i, b)
            size = part.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
            assert size >= 11, (i, size)
            boxes.append(b)
        buttons = boxes[:2] if line.locator("a").count() == 2 else boxes[:1]
        if len(buttons) == 2:
            a, b = buttons
            apart = a["x"] + a["width"] <= b["x"] or b["y"] >= a["y"] + a["height"]
            assert apart, buttons
        download = line.locator("a.tp-nb-download")
        href = download.get_attribute("href")
        assert download.get_attribute("download") == href == "parallel-reduction.ipynb"
        with urllib.request.urlopen(urljoin(url, href)) as r:
            nb = json.loads(r.read())
        heading = page.locator(".md-content h1").first.inner_text()
        heading = heading.strip().removesuffix("¶").strip()
        assert nb["nbformat"] == 4 and nb["cells"][0]["source"] == f"# {heading}"
        colab = line.locator("a.tp-nb-colab")
        if colab.count():
            target = colab.get_attribute("href")
            assert target.startswith("https://colab.research.google.com/github/")
            assert target.endswith(f"/blob/notebooks/{lang}/parallel-reduction.ipynb")
            assert line.locator(".tp-nb-why").count() == 0
        else:
            assert "Colab" in line.locator(".tp-nb-why").inner_text()
        assert not page.problems, page.problems
        line.screenshot(path=str(screenshot_dir / f"notebook-{lang}-{width}.png"))
    finally:
        context.close()
