"""What a reader downloads for each post, and how long the site takes to build.

    python -m thousand.site measure [--page blog/why-gpu/]

Prints, against the targets of issue 15 (targets, not timed tests):

1. the first load of every post in both languages, gzipped: an empty cache, until
   the network is idle, at most 700 KB for a post and 350 KB for a page without
   math or diagrams (the server counts what it sent: status line, headers and
   body, text bodies gzip -6 compressed as a static host such as GitHub Pages
   sends them); --page adds the breakdown of one page by resource type;
   (measured on a build of the working tree as it is);
2. a cold build of both languages, under 30 s, in a temporary copy of the working
   tree that holds every post twice (each copy under its own slug, with no point
   of a track): nothing of the site's own caches (.cache/) is there; MathJax and
   Mermaid come from ~/.cache/thousand-points/vendor as in any build;
3. the rebuild that `serve` runs after a post is edited, under 5 s: one post of
   that copy touched, then the same rebuild (`rebuild` in thousand.site).

The server counts rather than the browser: the DevTools events of a page miss the
requests its search worker makes, and the server sees every byte that left it.
"""

from __future__ import annotations

import gzip
import os
import re
import subprocess
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


TARGET_KB = 700  # a post's first load, gzipped
PLAIN_TARGET_KB = 350  # a page without math or diagrams
OTHER_PAGES = ("", "tracks/", "glossary/", "benchmarks/", "contributing/")
BUILD_TARGET_S = 30.0  # both languages, cold, twice today's posts
REBUILD_TARGET_S = 5.0  # after one post is edited, while serve runs
# What the copy leaves out: history, environments, builds, caches.
SKIP = {".git", ".venv", "site", ".cache", "node_modules", "__pycache__"}


def doubled_copy(root: Path, dest: Path) -> int:
    """The working tree copied to `dest` with every post twice; the number of
    posts per language there."""
    import shutil

    def skip(folder: str, names: list[str]) -> list[str]:
        top = Path(folder) == root
        return [
            n
            for n in names
            if n in SKIP - {"site"} or (top and (n == "site" or n.startswith(".site")))
        ]

    shutil.copytree(root, dest, ignore=skip, symlinks=True)
    count = 0
    for posts in sorted(dest.glob("docs/*/blog/posts")):
        originals = sorted(posts.glob("*.md"))
        for post in originals:
            text = post.read_text(encoding="utf-8")
            copy = re.sub(r"^slug: (\S+)$", r"slug: \1-copy", text, count=1, flags=re.M)
            copy = re.sub(r"^point: .*\n", "", copy, count=1, flags=re.M)
            (posts / f"{post.stem}-copy.md").write_text(copy, encoding="utf-8")
        count = max(count, 2 * len(originals))
    return count


def timed_build(root: Path, site_dir: Path, site_url: str) -> float:
    """`python -m thousand.site build` of the tree at `root`, its own code first on
    the path; the seconds it took."""
    env = {**os.environ, "PYTHONPATH": str(root / "src"), "SITE_URL": site_url}
    env["SITE_URL_EN"] = site_url + "en/"
    cmd = [sys.executable, "-m", "thousand.site", "build", "--site-dir", str(site_dir)]
    log = site_dir.with_suffix(".log")
    start = time.perf_counter()
    with open(log, "w") as out:
        done = subprocess.run(cmd, cwd=root, env=env, stdout=out, stderr=out)
    took = time.perf_counter() - start
    if done.returncode:
        sys.stderr.write(log.read_text())
        raise RuntimeError(f"the build in {root} failed (its log is above)")
    return took


def timed_rebuild(root: Path, site_dir: Path, site_url: str) -> float:
    """One post of `root` edited, then the rebuild `serve` runs for it."""
    post = sorted((root / "docs" / "zh" / "blog" / "posts").glob("*.md"))[0]
    post.write_text(post.read_text(encoding="utf-8") + "\n编辑。\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(root / "src"), "SITE_URL": site_url}
    env["SITE_URL_EN"] = site_url + "en/"
    code = (
        "import sys; from pathlib import Path; from thousand.site.__main__ import "
        "rebuild; rebuild(Path(sys.argv[1]), [Path(sys.argv[2])])"
    )
    log = site_dir.with_suffix(".rebuild.log")
    start = time.perf_counter()
    with open(log, "w") as out:
        done = subprocess.run(
            [sys.executable, "-c", code, str(site_dir), str(post)],
            cwd=root,
            env=env,
            stdout=out,
            stderr=out,
        )
    took = time.perf_counter() - start
    if done.returncode:
        sys.stderr.write(log.read_text())
        raise RuntimeError("the rebuild failed (its log is above)")
    return took


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


def first_load(chromium, base: str, page_path: str, log: list, problems: list):
    """Load one page in a fresh browser context (an empty cache) until the network
    is idle; the server appends what it sent to `log`."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
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


def sizes(site: Path, url_path: str) -> tuple[int, int]:
    """The file's size as served, and gzip -6 compressed."""
    path = site / unquote(urlsplit(url_path).path).lstrip("/")
    if path.is_dir():
        path = path / "index.html"
    data = path.read_bytes()
    return len(data), len(gzip.compress(data, compresslevel=6))


def _mib(n: int) -> str:
    return f"{n / 2**20:.2f} MiB"


def weigh(site: Path, log) -> dict[str, list[int]]:
    """By resource type: requests, bytes sent, and the same gzipped."""
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for path, status, ctype, sent in log:
        gz = sent  # as sent, unless a static host would compress it
        if status == 200 and any(c in ctype for c in COMPRESSIBLE):
            body, packed = sizes(site, path)
            gz = sent - body + packed
        row = rows[kind(ctype)]
        row[0] += 1
        row[1] += sent
        row[2] += gz
    return rows


def posts_of(site: Path) -> list[str]:
    indexes = {"archive", "author", "category", "tags", "page"}
    return [
        f"blog/{p.parent.name}/"
        for p in sorted(site.glob("blog/*/index.html"))
        if p.parent.name not in indexes and not p.parent.name.endswith("-copy")
    ]


def main(page_path: str | None = None) -> None:
    from thousand.site.__main__ import ROOT

    if page_path is not None:
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
        tree = Path(tmp) / "tree"
        print("copying the working tree with every post twice ...", flush=True)
        posts = doubled_copy(ROOT, tree)
        print(f"building both languages cold ({posts} posts each) ...", flush=True)
        cold = timed_build(tree, Path(tmp) / "doubled", url)
        print("editing one post, rebuilding as serve does ...", flush=True)
        rebuilt = timed_rebuild(tree, Path(tmp) / "doubled", url)
        print("building the site as it is, for the first loads ...", flush=True)
        site = Path(tmp) / "site"
        timed_build(ROOT, site, url)
        pages = [lang + p for lang in ("", "en/") for p in posts_of(site)]
        # the pages a reader meets besides posts, held to the same targets
        pages += [
            lang + p
            for lang in ("", "en/")
            for p in OTHER_PAGES
            if (site / lang / p / "index.html").exists()
        ]
        if page_path is not None and page_path not in pages:
            if not (site / page_path).exists():
                sys.exit(f"no page /{page_path} in the built site; posts: {pages}")
            pages.append(page_path)
        print(f"loading {len(pages)} pages, each with an empty cache ...", flush=True)
        results, problems = {}, []
        with B.serve(site, port, _handler(log := [])) as base, B.chromium() as chromium:
            for path in pages:
                log.clear()
                first_load(chromium, base, path, log, problems)
                for p, status, _, _ in log:
                    if status >= 400:
                        problems.append(f"HTTP {status}: {p} (on /{path})")
                html = (site / path / "index.html").read_text(encoding="utf-8")
                heavy = 'class="arithmatex"' in html or 'class="mermaid"' in html
                results[path] = (
                    weigh(site, log),
                    heavy,
                    sorted(log, key=lambda r: -r[3]),
                )

    print()
    print("first load, gzipped (empty cache, until the network is idle):")
    print(f"  {'post':<40}{'zh KB':>8}{'en KB':>8}  target")

    def line(page: str, name: str) -> bool:
        """Print a page's row (both languages it was built in); True if met."""
        row = [results[lang + page] for lang in ("", "en/") if lang + page in results]
        kbs = [sum(r[2] for r in rows.values()) / 1000 for rows, _, _ in row]
        target = TARGET_KB if any(heavy for _, heavy, _ in row) else PLAIN_TARGET_KB
        ok = max(kbs) <= target
        kind_ = "math/diagrams" if target == TARGET_KB else "plain"
        kb = "".join(f"{k:>8.0f}" for k in kbs)
        print(f"  {name:<40}{kb}  <= {target} ({kind_}) {'met' if ok else 'NOT MET'}")
        return ok

    post_pages = posts_of_list(results)
    met = sum(line(post, post) for post in post_pages)
    print(f"  {met} of {len(post_pages)} posts meet it")
    for page in OTHER_PAGES:  # the pages a reader meets besides posts
        if page in results or "en/" + page in results:
            line(page, page or "(home)")
    print()
    print("build (python -m thousand.site build, both languages):")
    verdict = "met" if cold < BUILD_TARGET_S else "NOT MET"
    print(f"  cold    {cold:5.1f} s  {posts} posts a language; target < "
          f"{BUILD_TARGET_S:.0f} s: {verdict}")  # fmt: skip
    verdict = "met" if rebuilt < REBUILD_TARGET_S else "NOT MET"
    print(f"  rebuild {rebuilt:5.1f} s  one post edited, as serve rebuilds; target "
          f"< {REBUILD_TARGET_S:.0f} s: {verdict}")  # fmt: skip
    if page_path is not None:
        rows, _, largest = results[page_path]
        print()
        print(f"first load of /{page_path} by type:")
        print(f"  {'type':<12}{'requests':>9}{'transferred':>15}{'gzipped':>15}")
        for k in KINDS:
            n, sent, gz = rows.get(k, [0, 0, 0])
            print(f"  {k:<12}{n:>9}{sent:>15,}{gz:>15,}")
        total = [sum(r[i] for r in rows.values()) for i in range(3)]
        print(f"  {'total':<12}{total[0]:>9}{total[1]:>15,}{total[2]:>15,}")
        print("  largest:")
        for p, _, _, n in largest[:3]:
            print(f"    {_mib(n):>10}  {p}")
    for p in problems:
        print(f"  warning: {p}")


def posts_of_list(results: dict) -> list[str]:
    return [p for p in results if p.startswith("blog/")]


def _handler(log: list):
    return type("Handler", (CountingHandler,), {"log": log})
