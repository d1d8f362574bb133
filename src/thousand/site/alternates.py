"""hreflang: each page names its copy in every language (hooks.alternate_links), and
Material's bundle is kept from reading those links as languages' roots.

Material's bundle fetches `sitemap.xml` beside every <link rel="alternate"> of a page,
taking each for a language's root (its own templates point them at the homes), so
that its language switch can keep a reader on the same page. Pointed at the page
itself, as hreflang should be, they would make it ask for /blog/why-gpu/sitemap.xml
and get a 404 on every page. The bundle the site ships reads only the alternates
without hreflang (the feeds): the switch's links (partials/alternate.html) already
lead to the same page, and both languages have the same pages (tests hold both).
A Material release that changes the selector fails the build here.
"""

from __future__ import annotations

from pathlib import Path

from thousand.site.search import mend_files

BUNDLES = "assets/javascripts"
SELECTOR = 'M("link[rel=alternate]")'
MENDED = 'M("link[rel=alternate]:not([hreflang])")'


class BundlePatchError(RuntimeError):
    pass


def mend(source: str) -> str:
    if source.count(MENDED) == 1 and SELECTOR not in source:
        return source
    if source.count(SELECTOR) != 1:
        raise BundlePatchError(
            f"Material's bundle has {source.count(SELECTOR)} copies of {SELECTOR} "
            f"(expected 1): see src/thousand/site/alternates.py"
        )
    return source.replace(SELECTOR, MENDED)


def mend_site(site_dir: Path) -> list[Path]:
    return mend_files(site_dir, BUNDLES, "bundle.*.min.js", mend, BundlePatchError)
