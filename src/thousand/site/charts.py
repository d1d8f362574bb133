"""What every chart the site draws with matplotlib shares: its width, its type sizes,
and its text left as text in the SVG.

A chart is drawn WIDTH inches wide (WIDTH * 72 SVG units, shown at WIDTH * 96 CSS px
where the column is wide enough) and shrinks to the text column on a phone: 358 CSS
px at a 390 px screen. Its smallest type, MIN_PT, is then still about 9 CSS px
(`rendered_px` computes it; the browser test holds every chart to it).

The SVG keeps its text as <text> (svg.fonttype 'none'), so the reader's browser sets
it with its own fonts, Chinese included: the build machine needs no Chinese font to
draw a Chinese chart. When it has one (`fc-list :lang=zh`), matplotlib measures
Chinese labels with it and lays the chart out to their true width; without one it
measures them with a fallback glyph (narrower than a Chinese character), and a long
Chinese label may come out a little tight. The font stack written into the SVG
(FONT_STACK) starts with DejaVu Sans and Verdana, whose widths matplotlib measured,
then the usual Chinese system fonts.
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
import math
import re
import shutil
import subprocess
import warnings

WIDTH = 5.0  # inches: 480 CSS px at full size, 358 on a 390 px phone
MIN_PT = 9.5  # the smallest type on any chart: 9.4 CSS px on that phone
PHONE_COLUMN = 358  # CSS px: the text column of a 390 px screen (Material)
LEGIBLE_PX = 9.0  # what the browser test asks of every chart's text there
# a title's line at most (text_width: a Latin letter 1, a Chinese character 2): 62
# letters of a kernel's name, the GPU and the date ran past a chart's right edge
TITLE_WIDTH = 56

# Chinese fonts matplotlib may know by name; otherwise fc-list finds one.
CJK_FAMILIES = (
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "Droid Sans Fallback",
    "AR PL UMing CN",
)
FONT_STACK = (
    "'DejaVu Sans', Verdana, 'Noto Sans', Roboto, 'Helvetica Neue', Arial, "
    "'PingFang SC', 'Hiragino Sans GB', 'Microsoft YaHei', 'Noto Sans CJK SC', "
    "'Source Han Sans SC', 'WenQuanYi Micro Hei', sans-serif"
)


@functools.cache
def cjk_family() -> str | None:
    """A Chinese font matplotlib can measure with, or None."""
    from matplotlib import font_manager as fm

    known = {f.name for f in fm.fontManager.ttflist}
    for name in CJK_FAMILIES:
        if name in known:
            return name
    # installed after matplotlib cached its font list: ask fontconfig
    if shutil.which("fc-list"):
        try:
            out = subprocess.run(
                ["fc-list", ":lang=zh", "file"],
                capture_output=True,
                text=True,
                timeout=20,
                check=False,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        for line in sorted(out.splitlines()):
            path = line.split(":")[0].strip()
            if not path.endswith((".ttf", ".otf", ".ttc")):
                continue
            try:
                fm.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):
                continue
            name = fm.FontProperties(fname=path).get_name()
            if name:
                return name
    return None


def rc() -> dict:
    family = ["DejaVu Sans"] + ([cjk_family()] if cjk_family() else [])
    return {
        "svg.fonttype": "none",  # text stays text: legible, searchable, any script
        "svg.hashsalt": "thousand",  # element ids from the chart, not random
        "font.family": family,
        "font.size": 10.5,
        "axes.titlesize": 10.5,
        "axes.labelsize": 10.5,
        "xtick.labelsize": MIN_PT,
        "ytick.labelsize": MIN_PT,
        "legend.fontsize": MIN_PT,
        "figure.titlesize": 10.5,
    }


@contextlib.contextmanager
def style():
    """matplotlib (Agg) with the site's chart style; yields pyplot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # without a Chinese font, every Chinese glyph would log a warning: the browser
    # sets them, matplotlib only measures
    font_log = logging.getLogger("matplotlib.font_manager")
    level = font_log.level
    font_log.setLevel(logging.ERROR)
    try:
        with plt.rc_context(rc()), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Glyph .* missing from font")
            yield plt
    finally:
        font_log.setLevel(level)


_FAMILY = re.compile(r"font-family: [^;\"]+")


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power(base: int, k: int) -> str:
    """base to the k as the pages write it: 2¹⁰, 10⁻⁵ (Unicode superscript digits,
    which the font draws as it draws the rest of the label)."""
    return f"{base}{str(k).translate(_SUPERSCRIPT)}"


_CARET = re.compile(r"\b(\d+)\^\{?(-?\d+)\}?")


def superscripts(text: str) -> str:
    """`text` with each "2^26" (as an experiment's label writes it) set as 2²⁶."""
    return _CARET.sub(lambda m: power(int(m.group(1)), int(m.group(2))), text)


def plain(x: float, base: float = 10) -> str:
    """A log axis's tick as plain text: 0.01, 512, 2¹⁶ (base 2), 0.0156 (2⁻⁶),
    10⁶, 3×10⁻⁵. matplotlib's own ticks set the exponent through its TeX engine as
    a superscript at 0.7 of the type size, smaller than these, and at a cost."""
    if x <= 0:
        return f"{x:g}"
    k = math.log(x, base)
    whole = abs(k - round(k)) < 1e-9
    if base == 2 and whole and x >= 2**10:
        return power(2, round(k))
    if 1e-3 <= x < 1e5:  # three figures at most: 2⁻⁹ reads 0.00195, not 0.00195312
        return f"{x:,.0f}" if x >= 1 and x == round(x) else f"{x:.3g}"
    k10 = math.floor(math.log10(x) + 1e-9)
    mantissa = x / 10**k10
    if abs(mantissa - round(mantissa)) < 1e-6 and round(mantissa) == 1:
        return power(10, k10)
    return f"{mantissa:.3g}×{power(10, k10)}"


def legend_below(fig, handles, labels) -> None:
    """A legend under the axes, across the figure (two columns while the names
    are short), and the figure made taller by what it takes."""
    ncol = 2 if max(len(str(n)) for n in labels) <= 22 else 1
    # a row is as tall as its label of most lines (a long name broken in several)
    lines = [str(n).count("\n") + 1 for n in labels]
    rows = sum(max(lines[i : i + ncol]) for i in range(0, len(lines), ncol))
    extra = 0.14 * rows + 0.08 * len(lines[::ncol]) + 0.15  # inches
    w, h = fig.get_size_inches()
    fig.set_size_inches(w, h + extra)
    fig.legend(handles, labels, loc="lower center", ncol=ncol, frameon=False)
    lay_out(fig, rect=(0, extra / (h + extra), 1, 1))


def lay_out(fig, rect=(0, 0, 1, 1)) -> None:
    """tight_layout, measured with the tick labels the chart will show: log axes
    get `plain` ticks first (matplotlib's own would be typeset as TeX, at a cost,
    only to be replaced)."""
    _plain_log_ticks(fig)
    fig.tight_layout(rect=rect)


def _plain_log_ticks(fig) -> None:
    """Every log axis of `fig` whose ticks matplotlib formats itself: `plain`."""
    from matplotlib.ticker import LogFormatter, LogFormatterSciNotation, LogLocator

    class Plain(LogFormatter):
        def __call__(self, x, pos=None):
            # the base class decides which ticks get a label, `plain` how it reads
            return plain(x, self._base) if super().__call__(x, pos) else ""

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() != "log":
                continue
            base = axis.get_transform().base
            if axis is ax.xaxis and isinstance(axis.get_major_locator(), LogLocator):
                # labels side by side: matplotlib spaces them for the full width,
                # and 2¹¹ 2¹³ 2¹⁵ ... ran together at a phone's
                axis.set_major_locator(LogLocator(base=base, numticks=7))
            if isinstance(axis.get_major_formatter(), LogFormatterSciNotation):
                axis.set_major_formatter(Plain(base=base))
            if isinstance(axis.get_minor_formatter(), LogFormatterSciNotation):
                axis.set_minor_formatter(Plain(base=base, labelOnlyBase=False))


def svg(fig) -> bytes:
    """The figure, laid out (`lay_out`, `legend_below`), as SVG (no date: the same
    chart gives the same bytes), its text set in FONT_STACK, and the figure closed."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    text = _FAMILY.sub("font-family: " + FONT_STACK, buf.getvalue().decode())
    return text.encode()


def text_width(text: str) -> int:
    """How wide `text` sets, in Latin letters: a Chinese character counts two."""
    return sum(2 if "\u2e80" <= c <= "\uffef" else 1 for c in text)


def wrap(text: str, width: int = 50) -> str:
    """A title in lines that fit the chart, `width` Latin letters each; a Chinese
    character counts as two, and a line may break between any two of them, but
    never after opening or before closing punctuation (no line ends with （ or
    starts with ）); a name longer than a line breaks after a hyphen."""
    cjk = "\u2e80-\u9fff\uff00-\uffef\u3000-\u303f"
    close = re.escape("）》」』，。、：；！？)]}")
    opening = re.escape("（《「『")
    word = rf"[{opening}]*(?:[{cjk}]|[^\s{cjk}]+)[{close}]*"
    tokens = []
    for token in re.findall(rf"{word}|\s+", text):
        # a name longer than a line (max-autotune-no-cudagraphs) may break after
        # its hyphens and underscores
        long = text_width(token) > width and not token.isspace()
        tokens += re.findall(r"[^-_]*[-_]+|[^-_]+", token) if long else [token]
    lines, line, used = [], "", 0
    for token in tokens:
        size = text_width(token)
        if token.isspace():
            if line:
                line, used = line + " ", used + 1
            continue
        if used + size > width and line.strip():
            lines.append(line.rstrip())
            line, used = "", 0
        line, used = line + token, used + size
    return "\n".join([*lines, line.rstrip()])


def cached(lang: str, inputs: list, draw_all) -> dict[str, bytes]:
    """`draw_all()` (name -> SVG), or what it gave last time when nothing it draws
    from changed: the files in `inputs` (ledgers, traces), the site's and the
    experiments' code, matplotlib's version and the language. Drawing all the
    charts takes seconds a build; editing a post changes none of them."""
    import hashlib
    import json

    import matplotlib

    from thousand.bench.ledger import ROOT

    code = sorted((ROOT / "src" / "thousand" / "site").glob("*.py"))
    code += sorted((ROOT / "src" / "thousand" / "experiments").glob("*.py"))
    h = hashlib.sha256(f"{lang} {matplotlib.__version__} {cjk_family()}".encode())
    for path in [*code, *inputs]:
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    folder = ROOT / ".cache" / "thousand-charts"
    path = folder / f"{lang}-{h.hexdigest()[:20]}.json"
    if path.is_file():
        try:
            return {k: v.encode() for k, v in json.loads(path.read_text()).items()}
        except (OSError, ValueError):
            pass  # drawn again below
    drawn = draw_all()
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob(f"{lang}-*.json"):  # one set per language is enough
        old.unlink(missing_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({k: v.decode() for k, v in drawn.items()}))
    tmp.replace(path)
    return drawn


_VIEWBOX = re.compile(r'viewBox="([-\d.]+) ([-\d.]+) ([\d.]+) ([\d.]+)"')
_SIZE = re.compile(r"font-size: ?([\d.]+)px")


def text_sizes(data: bytes | str) -> tuple[float, list[float]]:
    """An SVG chart's width in its own units and the font size of each text."""
    text = data.decode() if isinstance(data, bytes) else data
    box = _VIEWBOX.search(text)
    if not box:
        raise ValueError("an SVG without a viewBox")
    return float(box.group(3)), [float(s) for s in _SIZE.findall(text)]


def rendered_px(data: bytes | str, shown_width: float = PHONE_COLUMN) -> float:
    """The smallest text of an SVG chart in CSS px when it is shown `shown_width`
    CSS px wide, or at its own size if that is smaller (0 if it has no text)."""
    width, sizes = text_sizes(data)
    if not sizes:
        return 0.0
    scale = min(shown_width, width * 4 / 3) / width  # SVG units are points
    return min(sizes) * scale
