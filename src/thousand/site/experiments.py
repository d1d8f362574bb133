"""`<!-- results:experiment NAME -->`: an experiment's recorded result as a chart and
a table, with the figures its notes describe.

Both speak the page's language: the Chinese page's chart, table, caption and alt
text take their words from the experiment's `zh` (and CHART_ZH for the chart's own
few words). The chart is SVG with its text left as text (site.charts), so the
reader's browser sets the Chinese.
"""

from __future__ import annotations

import math
import re

from thousand.experiments import Experiment, lane_totals
from thousand.site import charts

COLORS = ["#4a7ebb", "#c0392b", "#27ae60", "#8e44ad", "#e67e22", "#16a085", "#7f8c8d"]
DASH = "–"
_TAB20 = [
    "#1f77b4",
    "#aec7e8",
    "#ff7f0e",
    "#ffbb78",
    "#2ca02c",
    "#98df8a",
    "#d62728",
    "#ff9896",
    "#9467bd",
    "#c5b0d5",
    "#8c564b",
    "#c49c94",
    "#e377c2",
    "#f7b6d2",
    "#7f7f7f",
    "#c7c7c7",
    "#bcbd22",
    "#dbdb8d",
    "#17becf",
    "#9edae5",
]  # matplotlib's tab20, for a chart with more kinds than COLORS
# The chart's own words, and the few recorded labels an experiment's zh= lacks (its
# own zh= wins): Chinese for the Chinese page's chart.
CHART_ZH = {
    "time (ms) from the first operation": "自第一个操作起的时间 (ms)",
    "kernel": "核函数",
    "{name} (0 not drawn)": "{name}（0 未画出）",
    "which of the warpgroup's 128 threads holds each element of its 64 x 128 "
    "accumulator (columns 0-31), as the GPU wrote it: warp w owns rows 16w to "
    "16w + 15": "线程束组的 128 个线程中，哪一个持有 64 × 128 累加器的哪个元素"
    "（第 0-31 列），由 GPU 写出：第 w 个线程束持有第 16w 到 16w + 15 行",
}


def plot_name(name: str) -> str:
    return f"experiment-{name}"


def _word(e: Experiment, text: str, lang: str) -> str:
    if lang != "zh":
        return text
    return e.zh.get(text, CHART_ZH.get(text, text))


def _cell(value, fmt: str) -> str:
    return DASH if value is None else fmt.format(value)


def table(e: Experiment, result: dict, lang: str) -> str:
    if result["kind"] == "timeline":
        head = (
            ["", "区间数", "忙碌时间 (ms)", "结束于 (ms)"]
            if lang == "zh"
            else ["", "spans", "busy (ms)", "ends at (ms)"]
        )
        rows = [
            [_word(e, lane, lang), str(spans), f"{busy:.3f}", f"{last:.3f}"]
            for lane, (spans, busy, last) in lane_totals(result).items()
        ]
    else:
        names = list(result["series"])
        fmt = result["y"].get("format", "{:,.3g}")
        head = [_word(e, result["x"]["label"], lang)] + [
            _word(e, n, lang) for n in names
        ]
        x_fmt = result["x"].get("format", "{}")
        rows = [
            [_word(e, x_fmt.format(x), lang)]  # a category with a zh= entry: in Chinese
            + [_cell(result["series"][n][i], fmt) for n in names]
            for i, x in enumerate(result["x"]["values"])
        ]

    def line(cells: list[str]) -> str:  # a | inside a cell (KL(q || p)) is text
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    out = [line(head), "|---|" + "---:|" * (len(head) - 1), *map(line, rows)]
    if result["kind"] != "timeline":
        unit = _word(e, result["y"]["label"], lang)
        out.append("")
        out.append(f"单位：{unit}" if lang == "zh" else f"Values: {unit}")
    return "\n".join(out) + "\n"


def notes(e: Experiment, result: dict, lang: str) -> str:
    sep = "：" if lang == "zh" else ": "
    return "".join(
        f"- {getattr(note, lang)}{sep}**{note.format.format(result['notes'][key])}**\n"
        for key, note in e.notes.items()
    )


def draw(e: Experiment, result: dict, title: str, lang: str = "en") -> bytes:
    """The chart, its words in `lang`, charts.WIDTH wide (see site.charts)."""
    with charts.style() as plt:
        return _draw(plt, e, result, title, lang)


def _line_looks(names: list[str]) -> dict:
    """Series named "<measure>, <arm>" with two measures ("training, dropout",
    "held-out, dropout"): one colour per arm, one line style per measure, so the
    two lines of an arm read as a pair. Other names: {} (a colour each)."""
    parts = [n.split(", ", 1) for n in names]
    if not all(len(p) == 2 for p in parts):
        return {}
    measures = sorted({m for m, _ in parts})
    arms = list(dict.fromkeys(a for _, a in parts))
    if len(measures) != 2 or len(arms) * 2 != len(names):
        return {}
    return {
        n: (COLORS[arms.index(a) % len(COLORS)], ("-", "--")[measures.index(m)])
        for n, (m, a) in zip(names, parts, strict=True)
    }


def _identifier_lines(text: str, width: int = 44) -> str:
    """A long name without spaces (a library's kernel) in lines of at most `width`
    characters, broken after underscores, so a legend fits a phone's width."""
    if len(text) <= width or " " in text:
        return text
    lines, line = [], ""
    for part in re.findall(r"[^_]*_|[^_]+", text):
        if line and len(line) + len(part) > width:
            lines.append(line)
            line = ""
        line += part
    return "\n".join([*lines, line])


def _draw(plt, e: Experiment, result: dict, title: str, lang: str) -> bytes:
    def word(text: str) -> str:
        return charts.superscripts(_word(e, str(text), lang))

    title = charts.superscripts(title)

    W = charts.WIDTH
    legend = None  # (handles, labels) for a legend under the chart
    if result["kind"] == "timeline":
        lanes = list(result["lanes"])
        fig, ax = plt.subplots(figsize=(W, 0.5 * len(lanes) + 2.2), dpi=100)
        kinds = sorted(
            {label for spans in result["lanes"].values() for label, *_ in spans}
        )
        # a library's pass may launch more kinds of kernel than COLORS holds:
        # then matplotlib's 20 distinct colours, hatched once they come round again
        palette = COLORS if len(kinds) <= len(COLORS) else _TAB20
        color = {k: palette[i % len(palette)] for i, k in enumerate(kinds)}
        hatch = {k: "////" if i >= len(palette) else None for i, k in enumerate(kinds)}
        for row, lane in enumerate(lanes):
            for label, start, end in result["lanes"][lane]:
                ax.barh(
                    row,
                    end - start,
                    left=start,
                    color=color[label],
                    hatch=hatch[label],
                    height=0.6,
                )
        # a long lane name in two lines, not half the chart's width
        ax.set_yticks(range(len(lanes)), [charts.wrap(word(n), 20) for n in lanes])
        ax.invert_yaxis()
        ax.set_xlabel(word("time (ms) from the first operation"))
        handles = [
            plt.Rectangle((0, 0), 1, 1, facecolor=color[k], hatch=hatch[k])
            for k in kinds
        ]
        legend = (handles, [_identifier_lines(word(k)) for k in kinds])
    else:
        xs = result["x"]["values"]
        names = list(result["series"])
        ticks = [word(x) for x in xs]
        # bars whose names would collide side by side lie across the chart, one
        # row each, their names (in at most two lines) at the left
        horizontal = result["kind"] == "bars" and max(map(len, ticks)) * len(ticks) > 40
        if horizontal:
            ticks = [charts.wrap(t, 22) for t in ticks]
            lines = max(t.count("\n") + 1 for t in ticks)
            row = max(0.2 * lines + 0.1, 0.14 * len(names) + 0.12)  # inches
            chart = row * len(xs) + 1.7
        else:
            chart = 3.8
        # optional pictures go below the chart, not beside it: the figure keeps
        # the chart's width, so on a phone neither is shrunk to half of it
        images = result.get("images")
        # square pictures across the figure's width, plus lines for their title
        below = W * _picture_rows(images) / _picture_cols(images) + 0.8 if images else 0
        fig = plt.figure(figsize=(W, chart + below), dpi=100)
        outer = fig.add_gridspec(
            2 if images else 1, 1, height_ratios=[chart, below][: 1 + bool(images)]
        )
        ax = fig.add_subplot(outer[0])
        if images:
            _draw_images(fig, outer[1], images, word)
        if result["kind"] == "bars":
            width = 0.8 / len(names)
            for j, n in enumerate(names):
                pos = [i + (j - (len(names) - 1) / 2) * width for i in range(len(xs))]
                ys = [0 if v is None else v for v in result["series"][n]]
                bar = ax.barh if horizontal else ax.bar
                bar(pos, ys, width, label=word(n), color=COLORS[j % len(COLORS)])
            if horizontal:
                ax.set_yticks(range(len(xs)), ticks)
                ax.invert_yaxis()
                values = [v for ys in result["series"].values() for v in ys if v]
                if not result["y"].get("log") and max(values, default=0) >= 1e5:
                    # six- and seven-digit ticks side by side: four of them fit
                    from matplotlib.ticker import MaxNLocator

                    ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
            else:
                ax.set_xticks(range(len(xs)), ticks)
        else:
            log_y = result["y"].get("log")
            look = _line_looks(list(result["series"]))
            for j, (n, ys) in enumerate(result["series"].items()):
                pts = [(x, y) for x, y in zip(xs, ys, strict=True) if y is not None]
                # a log axis has no place for 0 (a measured "nothing extra"): such
                # points are left out and the legend says so; the table has them
                zero = log_y and any(y <= 0 for _, y in pts)
                pts = [(x, y) for x, y in pts if not (log_y and y <= 0)]
                label = (
                    word("{name} (0 not drawn)").format(name=word(n))
                    if zero
                    else word(n)
                )
                color, style = look.get(n, (COLORS[j % len(COLORS)], "-"))
                if not pts:  # nothing to draw: the legend still names it
                    ax.plot([], [], "o", ls=style, label=label, color=color)
                    continue
                ax.plot(
                    *zip(*pts, strict=True),
                    "o",
                    ls=style,
                    ms=3,
                    label=label,
                    color=color,
                )
            log_x = result["x"].get("log")
            if log_x:  # True: base 2 (sizes in bytes, threads); 10: base 10
                base = 10 if log_x == 10 else 2
                ax.set_xscale("log", base=base)
                labels = [f"{x:,g}" for x in xs]
                if (
                    len(xs) <= 10
                    and max(map(len, labels)) <= 5
                    and not all(_power_of(x, base) for x in xs)
                ):
                    # a few short values that are not powers (lags 5, 10, 20...):
                    # a tick at each, not at powers no point sits on; long ones
                    # (parameter counts) keep the axis's own ticks, which fit
                    from matplotlib.ticker import NullLocator

                    ax.set_xticks(xs, labels)
                    ax.xaxis.set_minor_locator(NullLocator())
            elif all(isinstance(x, int) for x in xs):  # epochs, steps: no 2.5
                from matplotlib.ticker import MaxNLocator

                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if result["y"].get("log"):  # ticks in plain numbers: charts.lay_out
            (ax.set_xscale if horizontal else ax.set_yscale)("log")
        x_label, y_label = word(result["x"]["label"]), word(result["y"]["label"])
        ax.set_xlabel(y_label if horizontal else x_label)
        ax.set_ylabel(x_label if horizontal else y_label)
        ax.grid(True, axis="x" if horizontal else "both", which="major", alpha=0.3)
        if horizontal and len(names) > 1:  # above the bars, under the title
            # two columns only while the widest name fits half the axes (a
            # Chinese character is two Latin letters wide)
            widest = max(charts.text_width(word(n)) for n in names)
            ncol = 2 if widest <= 14 else 1
            ax.legend(loc="lower left", bbox_to_anchor=(0, 1), ncol=ncol, frameon=False)
        elif result["kind"] == "bars" and len(names) > 1:
            # the legend above the tallest bar, never over it: a band of headroom
            # across the top holds it, entries side by side while they fit the width
            shown = [word(n) for n in names]
            ncol = min(len(shown), 2) if sum(map(len, shown)) < 40 else 1
            rows = math.ceil(len(shown) / ncol)
            if not result["y"].get("log"):
                lo, hi = ax.get_ylim()
                ax.set_ylim(lo, hi * (1.1 + 0.1 * rows))
            ax.legend(loc="upper left", ncol=ncol)
        elif len(result["series"]) > 3:  # inside, it would cover the lines
            legend = ax.get_legend_handles_labels()
        elif len(result["series"]) > 1 or result["kind"] == "lines":
            ax.legend()
    # over the figure, not the axes (which the labels push right); long titles
    # wrap rather than run off the edge
    fig.suptitle(charts.wrap(title))
    if legend:  # under the chart, where it hides nothing
        charts.legend_below(fig, *legend)
    else:
        charts.lay_out(fig)
    return charts.svg(fig)


def _power_of(x, base: int) -> bool:
    """Whether x is base**k for a whole k (k may be negative)."""
    if not isinstance(x, int | float) or x <= 0:
        return False
    k = round(math.log(x, base))
    return math.isclose(x, base**k, rel_tol=1e-9)


def _picture_cols(images: dict) -> int:
    """Pictures in a row under the chart: about twice as many columns as rows (8
    pictures: 2 rows of 4, 16: 3 of 6)."""
    return math.ceil(math.sqrt(2 * len(images["values"])))


def _picture_rows(images: dict) -> int:
    return math.ceil(len(images["values"]) / _picture_cols(images))


def _draw_images(fig, spec, images: dict, word=str) -> None:
    """A square grid of small pictures (an RBM's filters, say), each reshaped to
    images["shape"], on one colour scale centred on zero: red positive, blue
    negative."""
    import numpy as np

    pictures = [np.reshape(v, images["shape"]) for v in images["values"]]
    cols = _picture_cols(images)
    rows = _picture_rows(images)
    frame = fig.add_subplot(spec, frameon=False)  # holds the title, centred
    frame.set_xticks([])
    frame.set_yticks([])
    frame.set_title(charts.wrap(word(images["label"]), 40))
    if len(pictures) == 1 and pictures[0].min() >= 0:  # one map of counts or ids
        _draw_map(fig, spec, pictures[0])
        return
    grid = spec.subgridspec(rows, cols, wspace=0.08, hspace=0.08)
    scale = max(float(np.abs(p).max()) for p in pictures) or 1.0
    for k, picture in enumerate(pictures):
        a = fig.add_subplot(grid[k // cols, k % cols])
        a.imshow(picture, cmap="RdBu_r", vmin=-scale, vmax=scale)
        a.set_xticks([])
        a.set_yticks([])


def _draw_map(fig, spec, picture) -> None:
    """One picture of values from 0 up (which thread holds an element, say): a
    sequential colour scale with its bar, and row and column numbers, so a value
    can be read off rather than only seen."""
    inner = spec.subgridspec(1, 1)
    a = fig.add_subplot(inner[0, 0])
    shown = a.imshow(picture, cmap="viridis", interpolation="nearest", aspect="auto")
    rows, cols = picture.shape
    a.set_yticks(range(0, rows, max(1, rows // 8)))
    a.set_xticks(range(0, cols, max(1, cols // 8)))
    fig.colorbar(shown, ax=a, fraction=0.05, pad=0.02)
