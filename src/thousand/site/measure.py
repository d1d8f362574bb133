"""How long the site takes to build, and how much a reader downloads for one post.

    python -m thousand.site measure [--page blog/why-gpu/]

1. builds both languages into a fresh folder, twice: the first build is as cold as
   this machine allows (mkdocs-jupyter and Material keep caches under .cache/, MathJax
   and Mermaid are fetched once into ~/.cache/thousand-points/vendor), the second
   reuses whatever the first left;
2. serves the result and opens one page in headless Chromium with the cache
   disabled, as a first visit, counting the bytes of every response (Chromium's
   encodedDataLength, i.e. what crossed the wire from this uncompressing server);
3. prints them by resource type, and what the same responses weigh gzip-compressed,
   which is what a static host such as GitHub Pages sends.
"""

from __future__ import annotations

import gzip
import tempfile
import time
import urllib.request
from collections import defaultdict
from pathlib import Path

from thousand.site import browser as B


def timed_build(site_dir: Path, site_url: str) -> float:
    from thousand.site.__main__ import build

    start = time.perf_counter()
    build(site_dir, site_url=site_url)
    return time.perf_counter() - start


def first_load(base_url: str, page_path: str) -> list[dict]:
    """Every response of one page load with an empty cache: url, type, bytes."""
    responses: dict[str, dict] = {}
    with B.chromium() as chromium:
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})

        def received(e):
            responses[e["requestId"]] = {
                "url": e["response"]["url"],
                "type": e["type"].lower(),
                "status": e["response"]["status"],
            }

        def finished(e):
            if e["requestId"] in responses:
                responses[e["requestId"]]["bytes"] = int(e["encodedDataLength"])

        cdp.on("Network.responseReceived", received)
        cdp.on("Network.loadingFinished", finished)
        page.goto(base_url + page_path, wait_until="networkidle")
        page.wait_for_timeout(500)  # late renderers (MathJax, Mermaid) settle
        context.close()
    loaded = [r for r in responses.values() if "bytes" in r]
    bad = [r for r in loaded if r["status"] >= 400]
    if bad:
        raise RuntimeError(f"{page_path}: failed responses {bad}")
    return loaded


def gzipped(url: str) -> int:
    with urllib.request.urlopen(url) as r:
        return len(gzip.compress(r.read(), compresslevel=6))


def main(page_path: str) -> None:
    page_path = page_path.lstrip("/")
    with tempfile.TemporaryDirectory() as tmp:
        port = B.free_port()
        url = f"http://127.0.0.1:{port}/"
        cold = timed_build(Path(tmp) / "cold", url)
        warm_dir = Path(tmp) / "warm"
        warm = timed_build(warm_dir, url)
        with B.serve(warm_dir, port) as base_url:
            loaded = first_load(base_url, page_path)
            for r in loaded:
                r["gzip"] = gzipped(r["url"]) if r["url"].startswith(base_url) else 0
    by_type: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in loaded:
        row = by_type[r["type"]]
        row[0] += 1
        row[1] += r["bytes"]
        row[2] += r["gzip"]
    print()
    print(f"build, both languages: {cold:.1f} s (first), {warm:.1f} s (again)")
    print(f"first load of /{page_path}, cache disabled:")
    print(f"  {'type':<12}{'files':>6}{'bytes':>14}{'gzipped':>14}")
    for kind, (n, raw, gz) in sorted(by_type.items(), key=lambda kv: -kv[1][1]):
        print(f"  {kind:<12}{n:>6}{raw:>14,}{gz:>14,}")
    total = [sum(v[i] for v in by_type.values()) for i in range(3)]
    print(f"  {'total':<12}{total[0]:>6}{total[1]:>14,}{total[2]:>14,}")
    mib = [t / 2**20 for t in total[1:]]
    print(f"  = {mib[0]:.2f} MiB as served here, {mib[1]:.2f} MiB gzipped")
