"""How long the site takes to build, and how much a reader downloads for one post.

    python -m thousand.site measure [--page blog/why-gpu/]

1. builds both languages into a fresh folder, twice: the first build is as cold as
   this machine allows (mkdocs-jupyter and Material keep caches under .cache/, MathJax
   and Mermaid are fetched once into ~/.cache/thousand-points/vendor), the second
   reuses whatever the first left;
2. serves the result and opens one page in headless Chromium with an empty cache, as
   a first visit, until the network is idle;
3. counts what the server sent for every request (status line, headers and body,
   uncompressed), by resource type, and what the same responses weigh with the body
   gzip-compressed, which is what a static host such as GitHub Pages sends.

The server counts rather than the browser: the DevTools events of a page miss the
requests its search worker makes, and the server sees every byte that left it.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from urllib.parse import unquote, urlsplit

from thousand.site import browser as B

KINDS = ["document", "stylesheet", "script", "font", "image", "other"]
# What a static host compresses: GitHub Pages gzips text, not images or woff2.
COMPRESSIBLE = ("text/", "javascript", "json", "xml", "svg")


def kind(content_type: str) -> str:
    t = content_type.split(";")[0].strip().lower()
    if t == "text/html":
        return "document"
    if t == "text/css":
        return "stylesheet"
    if "javascript" in t:
        return "script"
    if t.startswith("font/") or "font" in t or t.endswith("woff"):
        return "font"
    if t.startswith("image/"):
        return "image"
    return "other"  # the search index (JSON), the sitemaps (XML), ...


@contextlib.contextmanager
def quiet(log: Path):
    """Send this process's and its children's output to `log`; show it on failure."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(log, "w") as f:
        os.dup2(f.fileno(), 1)
        os.dup2(f.fileno(), 2)
    try:
        yield
    except BaseException:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        sys.stderr.write(log.read_text())
        raise
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


def timed_build(site_dir: Path, site_url: str) -> float:
    from thousand.site.__main__ import build

    start = time.perf_counter()
    with quiet(site_dir.with_suffix(".log")):
        build(site_dir, site_url=site_url)
    return time.perf_counter() - start


class _Counted:
    """A socket writer that counts what goes through it."""

    def __init__(self, raw):
        self.raw, self.sent = raw, 0

    def write(self, data):
        self.sent += len(data)
        return self.raw.write(data)

    def __getattr__(self, name):
        return getattr(self.raw, name)


class CountingHandler(B.QuietHandler):
    """Serves files and appends (path, status, content type, bytes sent) per request
    to `self.log`."""

    log: list[tuple[str, int, str, int]]

    def setup(self):
        super().setup()
        self.wfile = _Counted(self.wfile)

    def handle_one_request(self):
        self._status, self._type, before = 0, "", self.wfile.sent
        super().handle_one_request()
        if self._status:
            sent = self.wfile.sent - before
            self.log.append((self.path, self._status, self._type, sent))

    def send_response(self, code, message=None):
        self._status = code
        super().send_response(code, message)

    def send_header(self, keyword, value):
        if keyword.lower() == "content-type":
            self._type = value
        super().send_header(keyword, value)


def first_load(site: Path, port: int, page_path: str):
    """Load one page in a fresh browser context; return the server's log and the
    requests that failed or went elsewhere."""
    log: list[tuple[str, int, str, int]] = []
    handler = type("Handler", (CountingHandler,), {"log": log})
    problems: list[str] = []
    with B.serve(site, port, handler) as base, B.chromium() as chromium:
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()  # a new context: an empty cache
        page.on(
            "request",
            lambda r: (
                None
                if r.url.startswith((base, "data:"))
                else problems.append(f"not counted, from elsewhere: {r.url}")
            ),
        )
        page.on(
            "requestfailed",
            lambda r: problems.append(f"failed: {r.url} ({r.failure})"),
        )
        page.goto(base + page_path, wait_until="networkidle")
        context.close()
    return log, problems


def sizes(site: Path, url_path: str) -> tuple[int, int]:
    """The file's size as served, and gzip -6 compressed."""
    path = site / unquote(urlsplit(url_path).path).lstrip("/")
    if path.is_dir():
        path = path / "index.html"
    data = path.read_bytes()
    return len(data), len(gzip.compress(data, compresslevel=6))


def _mib(n: int) -> str:
    return f"{n / 2**20:.2f} MiB"


def main(page_path: str) -> None:
    page_path = page_path.strip("/")
    if page_path and not page_path.endswith(".html"):
        page_path += "/"
    # Before the builds, not after them: no browser, no measurement.
    B.chromium_path()
    try:
        import playwright  # noqa: F401
    except ImportError as e:
        raise B.NoBrowser('Playwright is missing: pip install -e ".[test]"') from e
    with tempfile.TemporaryDirectory() as tmp:
        port = B.free_port()
        url = f"http://127.0.0.1:{port}/"
        print("building both languages, twice ...", flush=True)
        cold = timed_build(Path(tmp) / "cold", url)
        site = Path(tmp) / "warm"
        warm = timed_build(site, url)
        target = (
            site / page_path / ("" if page_path.endswith(".html") else "index.html")
        )
        if not target.is_file():
            indexes = {"archive", "author", "category", "tags", "page"}
            posts = [
                f"blog/{p.parent.name}/"
                for p in sorted(site.glob("blog/*/index.html"))
                if p.parent.name not in indexes
            ]
            sys.exit(f"no page /{page_path} in the built site; posts: {posts}")
        log, problems = first_load(site, port, page_path)
        rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        largest = []
        for path, status, ctype, sent in log:
            gz = sent  # as sent, unless a static host would compress it
            if status == 200 and any(c in ctype for c in COMPRESSIBLE):
                body, packed = sizes(site, path)
                gz = sent - body + packed
            row = rows[kind(ctype)]
            row[0] += 1
            row[1] += sent
            row[2] += gz
            if status >= 400:
                problems.append(f"HTTP {status}: {path}")
            largest.append((sent, path))

    print()
    print("build, both languages (mkdocs build --strict, Chinese then English):")
    print(f"  cold  {cold:5.1f} s   into a fresh folder")
    print(f"  warm  {warm:5.1f} s   again, with what the first build cached")
    print()
    print(f"first load of /{page_path}: empty cache, until the network is idle")
    print(f"  {'type':<12}{'requests':>9}{'transferred':>15}{'gzipped':>15}")
    for k in KINDS:
        n, sent, gz = rows.get(k, [0, 0, 0])
        print(f"  {k:<12}{n:>9}{sent:>15,}{gz:>15,}")
    total = [sum(r[i] for r in rows.values()) for i in range(3)]
    print(f"  {'total':<12}{total[0]:>9}{total[1]:>15,}{total[2]:>15,}")
    print(f"  {'':<12}{'':>9}{_mib(total[1]):>15}{_mib(total[2]):>15}")
    print("  bytes: status line, headers and body; gzipped: the same, text bodies")
    print("  gzip -6 compressed (as a static host such as GitHub Pages sends them)")
    print("  largest:")
    for n, p in sorted(largest, reverse=True)[:3]:
        print(f"    {_mib(n):>10}  {p}")
    for p in problems:
        print(f"  warning: {p}")
