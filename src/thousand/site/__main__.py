"""Build both languages into one site/, or build and serve it.

    python -m thousand.site build           # site/ (Chinese) and site/en/ (English)
    python -m thousand.site serve [--port N] # build, then serve site/ on localhost
    python -m thousand.site measure [--page P] # build time; a post's first-load bytes

One MkDocs build per language (Material's recommended set-up); `mkdocs serve` would
show only one of them, so `serve` builds both and serves the result as it is.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
# The Chinese build first: it empties site/, the English one then fills site/en/.
CONFIGS = ["mkdocs.yml", "mkdocs.en.yml"]


def build(site_dir: Path | None = None, site_url: str | None = None) -> None:
    """Both languages. `site_url` (else $SITE_URL, else the default local server) is
    where the site will be served: the feeds' links and the sitemaps use it, and
    Material's language switch checks the sitemap before it keeps the reader on the
    same page."""
    urls = {}
    if site_url:
        base = site_url.rstrip("/") + "/"
        urls = {"SITE_URL": base, "SITE_URL_EN": base + "en/"}
    for config in CONFIGS:
        cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", config]
        if site_dir is not None:
            sub = site_dir if config == "mkdocs.yml" else site_dir / "en"
            cmd += ["--site-dir", str(sub)]
        print("$", " ".join(cmd), flush=True)
        env = {**os.environ, **urls, "NO_MKDOCS_2_WARNING": "1"}  # banner: not news
        subprocess.run(cmd, cwd=ROOT, check=True, env=env)


def serve(port: int) -> None:
    handler = functools.partial(
        http.server.SimpleHTTPRequestHandler, directory=str(ROOT / "site")
    )
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as httpd:
        print(
            f"serving both languages at http://127.0.0.1:{port}/ "
            f"(English at /en/); Ctrl-C stops"
        )
        httpd.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m thousand.site")
    parser.add_argument("command", choices=["build", "serve", "measure"])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--site-dir", type=Path, default=None)
    parser.add_argument("--page", default="blog/why-gpu/", help="for measure")
    args = parser.parse_args()
    if args.command == "measure":
        from thousand.site import browser, measure

        try:
            measure.main(args.page)
        except browser.NoBrowser as e:
            sys.exit(f"measure needs a browser: {e}")
        return
    local = f"http://127.0.0.1:{args.port}/" if args.command == "serve" else None
    build(args.site_dir, site_url=local)
    if args.command == "serve":
        serve(args.port)


if __name__ == "__main__":
    main()
