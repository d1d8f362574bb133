"""MkDocs hooks (mkdocs.yml: hooks): render results directives from the ledger,
access pictures from the CPU backend's traces and the learning paths' lists, add the
SVGs they draw to the site as generated files, count reading time in Chinese, and
fail the Chinese build on a spelling the glossary avoids."""

import html
import os
import re
import shutil
from pathlib import Path
from urllib.parse import urljoin

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

from thousand.bench import ledger as L
from thousand.site import (
    access,
    alternates,
    anchors,
    benchmarks,
    charts,
    descriptions,
    feedimages,
    feedstyle,
    glossary,
    notebooks,
    pagetoc,
    plaintex,
    readtime,
    repo,
    search,
    texsvg,
    tracks,
    vendor,
)
from thousand.site.render import DirectiveError, Results

_results: Results | None = None
_vendored: dict[str, tuple[str, bytes | None]] = {}
_benchmark_pages: dict[str, str] = {}  # generated page -> its Markdown
_tex: texsvg.Renderer | None = None  # formulas to SVG while building (None: browser)
_reading_times: dict[str, int] = {}  # point -> its post's minutes (track pages)
_figures: dict[str, str] = {}  # post's URL -> its first figure (the feeds' images)
_notebooks: dict[str, str] = {}  # a post's notebook's path in the site -> its text


@event_priority(100)  # before the RSS plugin's on_config, which reads its image
def on_config(config):
    global _results, _vendored, _benchmark_pages, _tex
    _notebooks.clear()  # serve rebuilds: only this build's posts
    # The feed's <image> must be an absolute URL to a raster image (RSS 2.0): the
    # logo as a 144 px PNG; without it the plugin writes <url>None</url>.
    rss = config.plugins.get("rss")
    if rss is not None and not rss.config.image:
        rss.config.image = f"{config.site_url or ''}images/points-144.png"
    # the repository's address: REPO_URL where the site is published, else the
    # clone's origin (posts show it above their commands: repo.py)
    if not config.repo_url:
        config.repo_url = repo.from_git(Path(config.config_file_path).parent)
        if config.repo_url and not config.repo_name:  # the header's source link
            config.repo_name = config.repo_url.split("://", 1)[-1].split("/", 1)[-1]
    _results = Results(config.extra["results"], config.theme["language"])
    _excerpts_up_to_the_separator()
    # MathJax and Mermaid: where pages load them from (docs/overrides/main.html).
    try:
        _vendored = vendor.resolve()
    except vendor.VendorError as e:
        raise PluginError(str(e)) from e
    config.extra["vendor"] = {
        name: {"src": src, "integrity": vendor.ASSETS[name].integrity}
        for name, (src, _) in _vendored.items()
    }
    # Math: typeset while building (texsvg) where npm brought MathJax's package and
    # node runs it; the pages then load no MathJax (docs/overrides/main.html).
    try:
        package = vendor.package_dir() if shutil.which("node") else None
    except vendor.VendorError as e:
        raise PluginError(str(e)) from e
    _tex = texsvg.Renderer(package) if package else None
    config.extra["math_built"] = _tex is not None
    if _tex is not None:
        _vendored.pop("mathjax", None)  # no page loads it
    # The benchmarks: one page per post with kernels, generated, listed in the nav
    # under the overview (benchmarks/index.md).
    lang = config.theme["language"]
    try:
        ledgers = benchmarks.load_all()
    except benchmarks.LedgerError as e:
        raise PluginError(str(e)) from e
    _benchmark_pages = benchmarks.pages(lang, ledgers)
    config.nav = _nav_with(config.nav, benchmarks.nav(lang, ledgers))


def _excerpts_up_to_the_separator() -> None:
    """Material's blog converts a post's whole Markdown for its excerpt on every
    index page that lists it (the blog's pages, archive, categories), then keeps
    what comes before `<!-- more -->`: the cost grows as posts times index pages,
    so twice the posts took four times as long. Convert only what comes before
    the separator (and a stand-in for the rest, so the post still links on)."""
    from material.plugins.blog.structure import Excerpt

    if getattr(Excerpt.render, "_up_to_separator", False):
        return
    full_render = Excerpt.render

    def render(self, page, separator):
        markdown = self.post.markdown
        head, found, _ = markdown.partition(separator)
        if found:
            self.post.markdown = f"{head}{separator}\n\n…\n"
        try:
            full_render(self, page, separator)
        finally:
            self.post.markdown = markdown

    render._up_to_separator = True
    Excerpt.render = render


def _nav_with(nav, pages):
    """`nav` with the entry `benchmarks/index.md` made a section: the overview,
    then `pages`."""
    out = []
    for item in nav or []:
        if isinstance(item, dict) and list(item.values()) == [benchmarks.INDEX]:
            (title,) = item
            item = {title: [benchmarks.INDEX, *pages]}
        out.append(item)
    return out


_other_results: dict[str, Results] = {}


def results_for(meta: dict, uri: str) -> Results:
    """The ledger a page renders: the site's, or the one its front matter names
    (`results: <slug>`, a point recorded on another GPU; thousand.bench.ledger)."""
    slug = meta.get("results")
    if slug is None or slug == _results.slug:
        return _results
    if not isinstance(slug, str) or not L.ledger_path(slug).exists():
        known = [p.stem for p in L.ledger_files()]
        raise DirectiveError(f"{uri}: front matter results: {slug!r}; ledgers: {known}")
    if slug not in _other_results:
        _other_results[slug] = Results(slug, _results.lang)
    return _other_results[slug]


def on_page_markdown(markdown, page, config, files):
    lang, uri = config.theme["language"], page.file.src_uri
    if uri_is_post(uri):
        # the notebook from the post as written, before any directive is rendered
        add_notebook(markdown, page, config, files)
    try:
        markdown = tracks.render_page(markdown, uri, lang, Path(config.docs_dir))
        point = page.meta.get("point") if uri_is_post(uri) else None
        markdown = tracks.post_links(markdown, point, uri, lang, Path(config.docs_dir))
        markdown = access.render_page(markdown, uri, lang)
        markdown = benchmarks.render_page(markdown, uri, lang)
        markdown = glossary.render_page(markdown, lang)
        return results_for(page.meta, uri).render_page(markdown, uri)
    except (DirectiveError, tracks.TrackError, OSError, KeyError, ValueError) as e:
        raise PluginError(f"directive: {e}") from e


def notebook_slug(page) -> str:
    return page.meta.get("slug") or Path(page.file.src_uri).stem


def add_notebook(markdown, page, config, files) -> None:
    """The post as a notebook (thousand.site.notebooks), written beside its page
    once the site is built."""
    base = config.site_url or "/"
    here = Path(page.file.src_uri).parent

    def link(target: str) -> str | None:
        path = os.path.normpath(here / target).replace(os.sep, "/")
        found = files.get_file_from_path(path)
        return urljoin(base, found.url) if found is not None else None

    try:
        nb = notebooks.notebook(
            markdown,
            config.theme["language"],
            Path(config.config_file_path).parent,
            urljoin(base, page.url),
            config.repo_url,
            link,
        )
    except (notebooks.NotebookError, OSError) as e:
        raise PluginError(f"{page.file.src_uri}: notebook: {e}") from e
    folder = Path(page.file.dest_uri).parent.as_posix()
    _notebooks[f"{folder}/{notebook_slug(page)}.ipynb"] = notebooks.dumps(nb)


def on_page_context(context, page, config, nav):
    # pages with no front matter of their own (the blog's generated lists, the
    # notebook) get a description of their own rather than the site's; a copy of
    # the meta, since the blog's later pages share their first page's
    text = descriptions.describe(
        page.url, page.file.src_uri, page.title or "", config.theme["language"]
    )
    if text and (descriptions.is_view(page.url) or not page.meta.get("description")):
        page.meta = {**page.meta, "description": text}
    return context


def on_page_content(html, page, config, files):
    # The reading time of a post (the blog plugin's own count is off in mkdocs.yml:
    # it sees a Chinese sentence as one word); a readtime set in front matter wins.
    if uri_is_post(page.file.src_uri) and "readtime" not in page.meta:
        page.config.readtime = readtime.minutes(html)
    if uri_is_post(page.file.src_uri) and page.meta.get("point"):
        # every page is converted before any is written out: the track pages
        # read these in on_post_page
        _reading_times[page.meta["point"]] = page.config.readtime
    if uri_is_post(page.file.src_uri):
        figure = feedimages.first_figure(html, page.url)
        if figure is None:
            _figures.pop(page.url, None)
        else:
            _figures[page.url] = figure
    # The table of contents is plain text, where MathJax never runs: a heading's
    # \(O(\log n)\) would show as TeX there, so it reads "O(log n)" instead.
    for item in _flatten(page.toc):
        item.title = plain_math(item.title)
    return html


def plain_math(text: str) -> str:
    """Inline TeX in a heading, as the plain text a table of contents can show."""
    return plaintex.inline(text)


def uri_is_post(uri: str) -> bool:
    return uri.startswith("blog/posts/")


def on_pre_build(config):
    check_terms(config)
    # after every on_config: the search plugin has made its index by now
    search_plugin = config.plugins.get("material/search")
    if search_plugin is not None and search_plugin.config.enabled:
        search.readable_index(search_plugin.search_index)


def check_terms(config) -> None:
    """Fail the Chinese build on a spelling docs/glossary.yml avoids, naming each
    file, line, variant and the term to write (every build runs this: `build`,
    and each rebuild of `serve`)."""
    if config.theme["language"] != "zh":
        return
    try:
        glossary.check(Path(config.docs_dir))
    except glossary.GlossaryError as e:
        raise PluginError(str(e)) from e


def on_files(files, config):
    # Plots are drawn while pages render, after files are collected: register every
    # plot the ledger has now, so links to them resolve and the files get written.
    lang = config.theme["language"]

    def draw_all() -> dict[str, bytes]:
        found = {f"assets/plots/{n}.svg": svg for n, svg in _results.plots().items()}
        for path in L.ledger_files():  # the points recorded on another GPU
            if path.stem != _results.slug:
                other = Results(path.stem, lang).plots(experiments_only=True)
                found.update({f"assets/plots/{n}.svg": svg for n, svg in other.items()})
        for name in access.names():
            found[f"assets/access/{name}.svg"] = access.draw(name, lang)
        return found

    several = sorted((L.RESULTS_DIR / "several-gpus").glob("*.json"))
    sweeps = sorted((L.RESULTS_DIR / "sweeps").glob("*.json"))
    inputs = [*L.ledger_files(), *several, *sweeps]
    inputs += sorted(access.ACCESS_DIR.glob("*.json"))
    for uri, svg in charts.cached(lang, inputs, draw_all).items():
        files.append(File.generated(config, uri, content=svg))
    for uri, markdown in _benchmark_pages.items():
        files.append(File.generated(config, uri, content=markdown))
    if config.plugins.get("rss") is not None:
        xsl = feedstyle.stylesheet(lang)
        files.append(File.generated(config, "rss.xsl", content=xsl))
    for src, data in _vendored.values():
        if data is not None:
            files.append(File.generated(config, src, content=data))
    return files


_EMPTY_HEADING_ID = re.compile(r'(<h[1-6]\b[^>]*\bid=")(")')


_ALTERNATE = re.compile(r'<link rel="alternate" href="[^"]*" hreflang="([\w-]+)">')


def alternate_links(output, page, config):
    """Material's <link rel="alternate" hreflang> lead to each language's home;
    make them lead to this page in each language, as absolute URLs (both builds
    share every page path; a page written in this language only keeps the other
    language's home)."""
    docs = Path(config.docs_dir)
    own = docs / page.file.src_uri

    def path(lang: str) -> str:
        twin = docs.parent / lang / page.file.src_uri
        # a generated page (benchmarks, the blog's indexes) has no file here
        same = lang == config.theme["language"] or twin.exists() or not own.exists()
        return page.url if same else ""

    return _with_alternates(output, config, path)


def _with_alternates(output: str, config, path) -> str:
    """Each <link rel="alternate" hreflang> of `output` leading to its language's
    root (absolute) + path(lang)."""
    links = {alt["lang"]: alt["link"] for alt in config.extra.get("alternate", [])}

    def one(m: re.Match) -> str:
        lang = m.group(1)
        if lang not in links:
            return m.group(0)
        href = urljoin(config.site_url or "/", links[lang]) + path(lang)
        tag = f'<link rel="alternate" href="{html.escape(href)}" hreflang="{lang}">'
        if lang == default:
            # a reader whose language is neither gets the site's first language
            tag += "\n" + tag.replace(f'hreflang="{lang}"', 'hreflang="x-default"')
        return tag

    default = next(iter(links), None)
    return _ALTERNATE.sub(one, output)


def on_post_template(output, template_name, config):
    # The 404 page (a template, not a page) is no page's copy: its alternates lead
    # to each language's home, as absolute URLs like every other page's.
    if template_name != "404.html":
        return output
    return _with_alternates(output, config, lambda lang: "")


def on_post_page(output, page, config):
    output = alternate_links(output, page, config)
    if page.file.src_uri in tracks.TRACK_PAGES.values():
        try:
            output = tracks.fill_reading_times(
                output, _reading_times, config.theme["language"]
            )
        except tracks.TrackError as e:
            raise PluginError(f"{page.file.src_uri}: {e}") from e
    if _tex is not None:
        try:
            output = _tex.page(output, page.file.src_uri)
        except texsvg.TexError as e:
            raise PluginError(str(e)) from e
    if uri_is_post(page.file.src_uri):
        output = repo.add(output, config.repo_url, config.theme["language"])
        # the table of contents on a phone (the sidebar's is hidden there)
        output = pagetoc.add(output, page.toc, config.theme["language"])
        # the notebook to download and Open in Colab, right under the title (the
        # table of contents, put there just before, then follows them)
        links = notebooks.links_html(
            notebook_slug(page), config.repo_url, config.theme["language"]
        )
        try:
            output = notebooks.add_links(output, links)
        except notebooks.NotebookError as e:
            raise PluginError(f"{page.file.src_uri}: {e}") from e
        # <link rel=prev/next> along the post's track, not by date
        try:
            output = tracks.head_links(
                output, page.meta.get("point"), page.url, Path(config.docs_dir)
            )
        except tracks.TrackError as e:
            raise PluginError(str(e)) from e
    # mkdocs-jupyter gives a notebook's Chinese headings an empty id (nbconvert's slug
    # drops non-ASCII) while its table of contents links to "_1", "_2", ... (Markdown's
    # slug): both come from the same headings in the same order, so give each empty
    # id the anchor the table of contents expects.
    if not page.file.src_uri.endswith(".ipynb"):
        return output
    anchors = [item.id for item in _flatten(page.toc)]
    empty = len(_EMPTY_HEADING_ID.findall(output))
    if empty == 0:
        return output
    if empty != len(anchors):
        raise PluginError(
            f"{page.file.src_uri}: {empty} headings without an id, but the table of "
            f"contents has {len(anchors)} entries"
        )
    ids = iter(anchors)
    return _EMPTY_HEADING_ID.sub(lambda m: m.group(1) + next(ids) + m.group(2), output)


def _flatten(toc):
    for item in toc:
        yield item
        yield from _flatten(item.children)


@event_priority(-100)  # after the RSS plugin has written the feeds
def on_post_build(config):
    if _tex is not None:
        _tex.close()
    for path, text in _notebooks.items():
        out = Path(config.site_dir) / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    # Material's search worker drops a Chinese query's last character when it cuts
    # the query into words ("张量核心" -> "张量* 核*"): mend the copy in the site.
    try:
        search.mend_site(Path(config.site_dir))
        alternates.mend_site(Path(config.site_dir))
        # a section's percent-encoded id (every Chinese heading) found, so the
        # phone's drawer closes on a tap at a section (thousand.site.anchors)
        anchors.mend_site(Path(config.site_dir))
        if config.plugins.get("rss") is not None:
            feedimages.add_to_feeds(Path(config.site_dir), config.site_url, _figures)
    except (
        feedimages.FeedImageError,
        search.SearchPatchError,
        alternates.BundlePatchError,
        anchors.AnchorPatchError,
    ) as e:
        raise PluginError(str(e)) from e
