"""`<!-- results:experiment NAME -->`: an experiment's recorded result as a chart and
a table, with the figures its notes describe.

The chart's text is English in both languages (the build machine need not have a
CJK font); the Chinese page gets Chinese in the table, the caption and the alt text.
"""

from __future__ import annotations

import io
import math
import textwrap

from thousand.experiments import Experiment, lane_totals

COLORS = ["#4a7ebb", "#c0392b", "#27ae60", "#8e44ad", "#e67e22", "#16a085", "#7f8c8d"]
DASH = "–"


def plot_name(name: str) -> str:
    return f"experiment-{name}"


def _word(e: Experiment, text: str, lang: str) -> str:
    return e.zh.get(text, text) if lang == "zh" else text


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
    out = [
        "| " + " | ".join(head) + " |",
        "|---|" + "---:|" * (len(head) - 1),
        *("| " + " | ".join(r) + " |" for r in rows),
    ]
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


def draw(e: Experiment, result: dict, title: str) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if result["kind"] == "timeline":
        lanes = list(result["lanes"])
        fig, ax = plt.subplots(figsize=(7.5, 0.55 * len(lanes) + 1.8), dpi=100)
        kinds = sorted(
            {label for spans in result["lanes"].values() for label, *_ in spans}
        )
        color = dict(zip(kinds, COLORS, strict=False))
        for row, lane in enumerate(lanes):
            for label, start, end in result["lanes"][lane]:
                ax.barh(row, end - start, left=start, color=color[label], height=0.6)
        ax.set_yticks(range(len(lanes)), lanes)
        ax.invert_yaxis()
        ax.set_xlabel("time (ms) from the first operation")
        handles = [plt.Rectangle((0, 0), 1, 1, color=color[k]) for k in kinds]
        ax.legend(handles, kinds, fontsize=8, loc="upper right", ncol=len(kinds))
    else:
        # optional pictures go below the chart, not beside it: the figure keeps
        # the chart's width, so on a phone neither is shrunk to half of it
        images = result.get("images")
        # square pictures across the figure's 7 inches, plus a line for their title
        below = 7 * _picture_rows(images) / _picture_cols(images) + 0.5 if images else 0
        fig = plt.figure(figsize=(7, 4.2 + below), dpi=100)
        outer = fig.add_gridspec(
            2 if images else 1, 1, height_ratios=[4.2, below][: 1 + bool(images)]
        )
        ax = fig.add_subplot(outer[0])
        if images:
            _draw_images(fig, outer[1], images)
        xs = result["x"]["values"]
        if result["kind"] == "bars":
            names = list(result["series"])
            width = 0.8 / len(names)
            for j, n in enumerate(names):
                pos = [i + (j - (len(names) - 1) / 2) * width for i in range(len(xs))]
                ys = [0 if v is None else v for v in result["series"][n]]
                ax.bar(pos, ys, width=width, label=n, color=COLORS[j % len(COLORS)])
            long = max(len(str(x)) for x in xs) * len(xs) > 60  # would collide
            ax.set_xticks(
                range(len(xs)),
                [str(x) for x in xs],
                fontsize=8,
                rotation=30 if long else 0,
                ha="right" if long else "center",
            )
        else:
            log_y = result["y"].get("log")
            for j, (n, ys) in enumerate(result["series"].items()):
                pts = [(x, y) for x, y in zip(xs, ys, strict=True) if y is not None]
                # a log axis has no place for 0 (a measured "nothing extra"): such
                # points are left out and the legend says so; the table has them
                zero = log_y and any(y <= 0 for _, y in pts)
                pts = [(x, y) for x, y in pts if not (log_y and y <= 0)]
                label = f"{n} (0 not drawn)" if zero else n
                if not pts:  # nothing to draw: the legend still names it
                    ax.plot([], [], "o-", label=label, color=COLORS[j % len(COLORS)])
                    continue
                ax.plot(
                    *zip(*pts, strict=True),
                    "o-",
                    ms=3,
                    label=label,
                    color=COLORS[j % len(COLORS)],
                )
            log_x = result["x"].get("log")
            if log_x:  # True: base 2 (sizes in bytes, threads); 10: base 10
                ax.set_xscale("log", base=10 if log_x == 10 else 2)
        if result["y"].get("log"):
            ax.set_yscale("log")
            lo, hi = ax.get_ylim()
            if hi < 10 * lo:  # within a decade: 4 and 5, not 4 x 10^0 and 5 x 10^0
                from matplotlib.ticker import FuncFormatter

                plain = FuncFormatter(lambda v, _: f"{v:g}")
                ax.yaxis.set_major_formatter(plain)
                ax.yaxis.set_minor_formatter(plain)
        ax.set_xlabel(result["x"]["label"])
        ax.set_ylabel(result["y"]["label"])
        ax.grid(True, which="major", alpha=0.3)
        if result["kind"] == "bars" and len(result["series"]) > 1:
            # the legend above the tallest bar, never over it: a band of headroom
            # across the top holds it, entries side by side while they fit the width
            names = [str(n) for n in result["series"]]
            ncol = min(len(names), 3) if sum(map(len, names)) < 60 else 1
            rows = math.ceil(len(names) / ncol)
            if not result["y"].get("log"):
                lo, hi = ax.get_ylim()
                ax.set_ylim(lo, hi * (1.1 + 0.1 * rows))
            ax.legend(fontsize=8, loc="upper left", ncol=ncol)
        elif len(result["series"]) > 1 or result["kind"] == "lines":
            ax.legend(fontsize=8)
    ax.set_title(textwrap.fill(title, 80), fontsize=10)  # long titles wrap, not clip
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    return buf.getvalue()


def _picture_cols(images: dict) -> int:
    """Pictures in a row under the chart: about twice as many columns as rows (8
    pictures: 2 rows of 4, 16: 3 of 6)."""
    return math.ceil(math.sqrt(2 * len(images["values"])))


def _picture_rows(images: dict) -> int:
    return math.ceil(len(images["values"]) / _picture_cols(images))


def _draw_images(fig, spec, images: dict) -> None:
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
    frame.set_title(textwrap.fill(images["label"], 90), fontsize=9)
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
    a.tick_params(labelsize=7)
    fig.colorbar(shown, ax=a, fraction=0.05, pad=0.02).ax.tick_params(labelsize=7)
