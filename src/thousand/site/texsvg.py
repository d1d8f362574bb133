"""Math rendered while the site is built: every formula ships as MathJax's SVG.

pymdownx.arithmatex (generic) writes each formula as TeX in <span class="arithmatex">
(inline, \\( \\)) or <div class="arithmatex"> (display, \\[ \\]). The pages used to
load MathJax (2 MiB, ~730 KB gzipped) to typeset them in the reader's browser. Now
node runs the same MathJax package (src/thousand/site/texsvg.js; fetched by
src/thousand/site/vendor.py) while the site is built, and each formula's TeX is
replaced by the <mjx-container> MathJax would have made: the same SVG, its hidden
MathML for screen readers, MathJax's stylesheet in the page's head. A formula MathJax
rejects fails the build. Without npm (or with THOUSAND_VENDOR=cdn) the pages load
MathJax as before (docs/overrides/main.html).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).with_name("texsvg.js")
# pymdownx.arithmatex's generic output: TeX, HTML-escaped, in a span or a div.
_MATH = re.compile(r'<(span|div) class="arithmatex">(.*?)</\1>', re.S)
_IDS = re.compile(r"MJX-\d+-")


class TexError(RuntimeError):
    pass


def _tex(inner: str, display: bool) -> str:
    tex = html.unescape(inner).strip()
    opening, closing = ("\\[", "\\]") if display else ("\\(", "\\)")
    if tex.startswith(opening) and tex.endswith(closing):
        tex = tex[2:-2]
    elif display and tex.startswith("$$") and tex.endswith("$$"):
        tex = tex[2:-2]
    return tex  # a display environment (\begin{align} ...) stays as it is


class Renderer:
    """One node process, started at the first formula, rendering on request; a
    formula seen before (the same TeX on another page) is not rendered again."""

    def __init__(self, package: Path, node: str | None = None):
        self.package, self.node = package, node or shutil.which("node") or "node"
        self.proc: subprocess.Popen | None = None
        self.css = ""
        self.memo: dict[tuple[str, bool], str] = {}

    def _start(self) -> None:
        self.proc = subprocess.Popen(
            [self.node, str(SCRIPT), str(self.package)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.css = json.loads(self._line())["css"]

    def _line(self) -> str:
        line = self.proc.stdout.readline()
        if not line:
            raise TexError(f"node {SCRIPT.name} ended (exit {self.proc.poll()})")
        return line

    def render(self, items: list[tuple[str, bool]]) -> list[str]:
        missing = list(dict.fromkeys(i for i in items if i not in self.memo))
        if missing:
            if self.proc is None:
                self._start()
            self.proc.stdin.write(json.dumps(missing, ensure_ascii=False) + "\n")
            self.proc.stdin.flush()
            self.memo.update(zip(missing, json.loads(self._line()), strict=True))
        return [self.memo[i] for i in items]

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
            self.proc = None

    def page(self, output: str, where: str) -> str:
        """The page's HTML with every formula rendered and MathJax's stylesheet in
        its head; a page without math as it was."""
        found = list(_MATH.finditer(output))
        if not found:
            return output
        items = [
            (_tex(m.group(2), m.group(1) == "div"), m.group(1) == "div") for m in found
        ]
        svgs = self.render(items)
        bad = [
            f"{tex!r}: {err.group(1)}"
            for (tex, _), svg in zip(items, svgs, strict=True)
            if (err := re.search(r'data-mjx-error="([^"]*)"', svg))
        ]
        if bad:
            raise TexError(f"{where}: MathJax rejects " + "; ".join(bad))
        parts, last = [], 0
        for k, (m, svg) in enumerate(zip(found, svgs, strict=True)):
            # each formula's glyph ids, unique on the page (a memo's copy repeats them)
            svg = _IDS.sub(f"MJX-{k}-", svg)
            parts += [output[last : m.start(2)], svg]
            last = m.end(2)
        parts.append(output[last:])
        out = "".join(parts)
        style = f'<style id="tp-mathjax">{self.css}</style>\n'
        return out.replace("</head>", style + "</head>", 1)
