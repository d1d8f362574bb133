"""The stylesheet a browser applies to the RSS feeds (rss.xsl beside each feed),
with its words in the feed's language. The RSS plugin's own stylesheet
(`stylesheet: auto`) is written once, in English with French left in it ("Par"
before each author), for both languages; mkdocs.yml names this one instead.

An item's image is its post's first figure (an <enclosure>, feedimages.py): the
stylesheet shows it above the item's summary.
"""

from __future__ import annotations

WORDS = {
    "zh": {
        "lang": "zh-CN",
        "intro": (
            "这是本站的 RSS 订阅源。把这一页的地址填进你的 RSS 阅读器，"
            "就能在新文章发表时收到它。"
        ),
        "site": "打开网站",
        "read": "阅读全文",
    },
    "en": {
        "lang": "en",
        "intro": (
            "This is the site's RSS feed. Paste this page's address into your "
            "feed reader to hear of each new post."
        ),
        "site": "Go to the site",
        "read": "Read the post",
    },
}

# the item's date from RFC 822 ("Wed, 25 Nov 2026 05:30:00 +0800") in XSLT 1.0
_MONTHS = "JanFebMarAprMayJunJulAugSepOctNovDec"
_DATE = {
    "zh": (
        '<xsl:value-of select="substring(pubDate, 13, 4)"/> 年 '
        '<xsl:value-of select="string-length(substring-before('
        f"'{_MONTHS}', substring(pubDate, 9, 3))) div 3 + 1\"/> 月 "
        '<xsl:value-of select="number(substring(pubDate, 6, 2))"/> 日'
    ),
    "en": (
        # a space alone between two elements is dropped from a stylesheet: <xsl:text>
        '<xsl:value-of select="number(substring(pubDate, 6, 2))"/>'
        "<xsl:text> </xsl:text>"
        '<xsl:value-of select="substring(pubDate, 9, 8)"/>'
    ),
}

_TEMPLATE = """<?xml version="1.0" encoding="UTF-8"?>
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
<xsl:output method="html" encoding="UTF-8" indent="yes"/>
<xsl:template match="/rss/channel">
<html lang="{lang}">
<head>
<meta charset="UTF-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title><xsl:value-of select="title"/> · RSS</title>
<style>
body {{ margin: 0 auto; max-width: 44rem; padding: 1rem;
  font: 16px/1.6 system-ui, -apple-system, "PingFang SC", "Microsoft YaHei", sans-serif;
  color: #1f2937; background: #f8f9fc; }}
header {{ border-bottom: 2px solid #3f51b5; margin-bottom: 1.5rem; }}
header img {{ float: left; margin: 0 1rem .5rem 0; border-radius: 50%; }}
h1 {{ font-size: 1.5rem; margin: .3rem 0; }}
.note {{ clear: both; background: #e8eaf6; border-radius: 6px; padding: .6rem .8rem; }}
article {{ background: #fff; border-radius: 8px; padding: 1rem 1.2rem;
  margin-bottom: 1rem; box-shadow: 0 1px 4px rgba(0, 0, 0, .08); }}
h2 {{ font-size: 1.15rem; margin: 0 0 .3rem; }}
a {{ color: #3f51b5; }}
time {{ color: #6b7280; font-size: .9rem; }}
article img {{ max-width: 100%; height: auto; }}
.tags span {{ display: inline-block; background: #e8eaf6; color: #303f9f;
  border-radius: 4px; font-size: .8rem; padding: 0 .4rem; margin: 0 .3rem .3rem 0; }}
</style>
</head>
<body>
<header>
<xsl:if test="image/url">
<img src="{{image/url}}" width="64" height="64" alt=""/>
</xsl:if>
<h1><xsl:value-of select="title"/></h1>
<p><xsl:value-of select="description"/></p>
<p class="note">{intro}</p>
<p><a href="{{link}}">{site}</a></p>
</header>
<xsl:for-each select="item">
<article>
<h2><a href="{{link}}"><xsl:value-of select="title"/></a></h2>
<xsl:if test="pubDate"><time>{date}</time></xsl:if>
<xsl:if test="enclosure[starts-with(@type, 'image/')]">
<img src="{{enclosure/@url}}" alt=""/>
</xsl:if>
<p><xsl:value-of select="description"/></p>
<p class="tags"><xsl:for-each select="category">
<span><xsl:value-of select="."/></span>
</xsl:for-each></p>
<p><a href="{{link}}">{read}</a></p>
</article>
</xsl:for-each>
</body>
</html>
</xsl:template>
</xsl:stylesheet>
"""


def stylesheet(lang: str) -> str:
    words = WORDS[lang]
    return _TEMPLATE.format(date=_DATE[lang], **words)
