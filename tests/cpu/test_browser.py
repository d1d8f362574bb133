"""The built site in a real browser (headless Chromium through Playwright): every page
loads without console errors or failed requests, internal links and their #anchors
resolve, the language switch lands on the same page, search finds posts in Chinese
and in English, math and diagrams render. Screenshots of the home page and a post in
each language go to $THOUSAND_SCREENSHOTS (or the test's temporary folder).

Without Chromium or Playwright this module skips with the reason; with CI=true it
fails instead, so CI cannot pass without having looked.
"""

import os
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin

import pytest

from thousand.site import browser as B

LANGS = {"zh": "", "en": "en/"}
POST = "blog/why-gpu/"


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
        if os.environ.get("CI") == "true":
            pytest.fail(f"{e}; CI=true does not allow skipping the browser checks")
        pytest.skip(str(e))


@pytest.fixture
def page(chromium):
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.problems = []
    page.on(
        "console",
        lambda m: (
            page.problems.append(f"console {m.type}: {m.text}")
            if m.type == "error"
            else None
        ),
    )
    page.on("pageerror", lambda e: page.problems.append(f"page error: {e}"))
    page.on(
        "requestfailed",
        lambda r: page.problems.append(f"request failed: {r.url} {r.failure}"),
    )
    page.on(
        "response",
        lambda r: (
            page.problems.append(f"HTTP {r.status}: {r.url}")
            if r.status >= 400
            else None
        ),
    )
    yield page
    context.close()


def _pages(site: Path) -> list[str]:
    """Every page of both languages, as a URL path relative to the site root."""
    return sorted(
        p.relative_to(site).parent.as_posix().removeprefix(".") + "/"
        for p in site.rglob("index.html")
    )


def test_every_page_loads_cleanly_and_links_resolve(built_site, base_url, page):
    pages = _pages(built_site)
    assert len(pages) > 20
    ids: dict[str, set[str]] = {}
    links: dict[str, str] = {}  # internal link -> the page it was found on
    problems = []
    for path in pages:
        url = urljoin(base_url, path.lstrip("/"))
        page.problems.clear()
        page.goto(url, wait_until="networkidle")
        problems += [f"{path}: {p}" for p in page.problems]
        ids[url] = set(page.eval_on_selector_all("[id]", "els => els.map(e => e.id)"))
        for href in page.eval_on_selector_all("a[href]", "els => els.map(a => a.href)"):
            if href.startswith(base_url):
                links.setdefault(href, path)
    assert not problems, "\n".join(problems)

    broken = []
    for href, found_on in sorted(links.items()):
        target, fragment = urldefrag(href)
        fragment = unquote(fragment)
        if fragment.startswith("__code_"):  # code annotations: Material's script
            fragment = ""  # turns their targets into tooltips
        if target in ids:
            if fragment and fragment not in ids[target]:
                broken.append(f"{found_on}: {href} (no id {fragment!r})")
            continue
        try:  # a file rather than a page: the feed, a download, an SVG
            with urllib.request.urlopen(target) as r:
                assert r.status == 200
        except urllib.error.HTTPError as e:
            broken.append(f"{found_on}: {href} ({e.code})")
    assert not broken, "broken internal links:\n" + "\n".join(broken)


@pytest.mark.parametrize("path", ["", "blog/", POST, "tracks/cuda/"])
def test_language_switch_lands_on_the_same_page(base_url, page, path):
    for here, there in (("zh", "en"), ("en", "zh")):
        # networkidle: Material has fetched both sitemaps and handles the click
        # itself, keeping the path only if the other language's sitemap has it.
        page.goto(base_url + LANGS[here] + path, wait_until="networkidle")
        page.hover(".md-header__option .md-select")
        page.click(f'.md-select__link[hreflang="{there}"]')
        page.wait_for_load_state()
        assert page.url == base_url + LANGS[there] + path


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
    # networkidle: the search worker has loaded the index before the first keystroke
    page.goto(base_url + LANGS[lang], wait_until="networkidle")
    page.click(".md-search__input")
    from playwright.sync_api import expect  # present: the page fixture needed it

    # The box takes keystrokes only once the worker is ready, which it says.
    ready = {"zh": "键入以开始搜索", "en": "Type to start searching"}[lang]
    expect(page.locator(".md-search-result__meta")).to_have_text(ready)
    page.keyboard.type(query)  # Chinese arrives as text input, with no key events;
    page.keyboard.press("End")  # an IME ends with a key release, which Material reads
    results = page.locator(".md-search-result__item a")
    try:
        results.first.wait_for(timeout=15_000)
    except Exception:
        meta = page.locator(".md-search-result__meta").inner_text()
        pytest.fail(f"no result for {query!r}; the search says: {meta!r}")
    hrefs = [a.get_attribute("href") for a in results.all()]
    assert any(post in (h or "") for h in hrefs), hrefs


@pytest.mark.parametrize("lang", LANGS)
def test_math_and_diagrams_render(base_url, page, lang):
    page.goto(base_url + LANGS[lang] + POST, wait_until="networkidle")
    math = page.locator(".arithmatex")
    assert math.count() > 0, "the post has no math to check"
    page.wait_for_function(
        "document.querySelectorAll('.arithmatex mjx-container').length"
        " === document.querySelectorAll('.arithmatex').length"
    )
    assert page.locator("mjx-container merror").count() == 0  # TeX MathJax rejected
    diagrams = page.locator(".mermaid")
    assert diagrams.count() > 0, "the post has no diagram to check"
    # Material draws each diagram into a closed shadow root in place of its source.
    page.wait_for_function(
        "[...document.querySelectorAll('.mermaid')].every("
        "d => !d.textContent.includes('sequenceDiagram')"
        " && d.getBoundingClientRect().height > 100)"
    )
    assert not page.problems, page.problems


def test_screenshots(base_url, page, tmp_path):
    out = Path(os.environ.get("THOUSAND_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    for lang, prefix in LANGS.items():
        for name, path in (("home", ""), ("post", POST)):
            page.goto(base_url + prefix + path, wait_until="networkidle")
            shot = out / f"{lang}-{name}.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 10_000
            print(f"screenshot: {shot}")
