"""An image for each post in the RSS feeds: the post's first figure, as an
<enclosure> (RSS 2.0), which feed readers show beside the item and the feeds'
stylesheet (feedstyle.py) shows above its summary.

The RSS plugin takes an item's image only from a post's front matter (`image`),
and measures it as a file beside the post's Markdown; a post's figures are its
charts and access pictures, SVGs the site draws while it builds, which no front
matter names. So the hooks note each post's first figure as its page is converted
(`first_figure`), and once the feeds are written, add the enclosures to them
(`add_to_feeds`), each with the built file's type and length.

A post whose figures are all still waiting for the GPU run has none yet: its item
carries no image rather than the site's logo standing in for one.
"""

from __future__ import annotations

import html
import mimetypes
import re
from pathlib import Path
from urllib.parse import urljoin, urlsplit

FEEDS = ("feed_rss_created.xml", "feed_rss_updated.xml")
# the site's own pictures (not the logo, not a badge from elsewhere)
_FIGURE = re.compile(r'<img\b[^>]*?\bsrc="([^"]*assets/(?:plots|access)/[^"]+)"')
_ITEM = re.compile(r"<item>.*?</item>", re.S)
_LINK = re.compile(r"<link>([^<]*)</link>")


class FeedImageError(RuntimeError):
    pass


def first_figure(content: str, page_url: str) -> str | None:
    """The site path (from the build's root, no leading slash) of the first of the
    site's figures in a page's converted HTML, or None where it has none."""
    if not isinstance(content, str) or not isinstance(page_url, str):
        raise TypeError(
            f"first_figure takes the page's HTML and URL as str; got "
            f"{type(content).__name__} and {type(page_url).__name__}"
        )
    found = _FIGURE.search(content)
    if found is None:
        return None
    src = html.unescape(found.group(1))
    path = urlsplit(urljoin("/" + page_url, src)).path
    return path.lstrip("/")


def add_to_feeds(site_dir: Path, site_url: str, figures: dict[str, str]) -> int:
    """Give each item of the built feeds whose post has a figure (`figures`: the
    post's page URL -> its figure's path, both from the build's root) an
    <enclosure> of that figure; the number of items given one. A figure missing
    from the build, or an item already carrying an enclosure, fails."""
    if not isinstance(site_url, str) or not site_url:
        raise FeedImageError(
            f"the feeds' images need the site's address (site_url); got {site_url!r}"
        )
    if not isinstance(figures, dict):
        raise TypeError(f"figures is a dict of page URL -> path; got {figures!r}")
    if not isinstance(site_dir, (str, Path)) or not Path(site_dir).is_dir():
        raise FeedImageError(f"site_dir is the built site's folder; got {site_dir!r}")
    site_dir = Path(site_dir)
    base = site_url if site_url.endswith("/") else site_url + "/"
    by_link = {urljoin(base, page): image for page, image in figures.items()}
    added = 0
    for name in FEEDS:
        feed = site_dir / name
        if not feed.exists():
            continue
        items = []
        text = feed.read_text(encoding="utf-8")
        for item in _ITEM.finditer(text):
            link = _LINK.search(item.group(0))
            image = by_link.get(html.unescape(link.group(1))) if link else None
            if image is not None:
                items.append((item, _enclosure(site_dir, base, image, feed, link)))
        for item, tag in reversed(items):  # from the end: offsets stay valid
            one = item.group(0).replace("</item>", f"{tag} </item>")
            text = text[: item.start()] + one + text[item.end() :]
        feed.write_text(text, encoding="utf-8")
        added += len(items)
    return added


def _enclosure(site_dir: Path, base: str, image: str, feed: Path, link) -> str:
    """The <enclosure> of `image` (a path in the build) for the item `link` of
    `feed`: its absolute URL, type and length."""
    item = link.string
    if "<enclosure" in item:
        raise FeedImageError(f"{feed}: {link.group(1)} has an image already")
    file = site_dir / image
    if not file.is_file():
        raise FeedImageError(
            f"{feed}: {image}, the figure of {link.group(1)}, is not built"
        )
    kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
    url = html.escape(urljoin(base, image))
    return f'<enclosure url="{url}" type="{kind}" length="{file.stat().st_size}" />'
