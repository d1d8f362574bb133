"""Headless Chromium for the site's browser checks and measurements.

Uses the machine's own Chromium (Debian's `chromium`, or Google Chrome) through
Playwright; Playwright's own browser download is never needed. Set
THOUSAND_CHROMIUM to a binary to choose another.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import socket
import threading
from pathlib import Path

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# Headless, as root in a container, on a machine that may have no network: without
# the last four, Chromium keeps trying to reach Google's services at every start.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]


class NoBrowser(RuntimeError):
    pass


def chromium_path() -> str:
    chosen = os.environ.get("THOUSAND_CHROMIUM")
    if chosen:
        if not Path(chosen).exists():
            raise NoBrowser(f"THOUSAND_CHROMIUM={chosen} does not exist")
        return chosen
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    raise NoBrowser(
        "no Chromium found (looked for " + ", ".join(CANDIDATES) + "); on Debian or "
        "Ubuntu: apt-get install chromium, or set THOUSAND_CHROMIUM"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # a test run need not list every request
        pass


@contextlib.contextmanager
def serve(root: Path, port: int = 0, handler=QuietHandler):
    """Serve `root` on localhost (a free port unless given) with `handler` for the
    duration; yields the base URL."""
    bound = functools.partial(handler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), bound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def chromium():
    """A headless Chromium (Playwright's Browser), closed afterwards."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as e:
        raise NoBrowser("Playwright is not installed: pip install playwright") from e
    path = chromium_path()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()
