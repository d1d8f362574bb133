"""Draw the memory-access pictures recorded by `python -m thousand.cpu.pictures`.

A page asks for one with `<!-- access:NAME -->` on a line of its own; the hook adds
assets/access/NAME.svg to the site and puts the image with a one-line reading of
each panel in the page's language. The numbers come from the JSON, traced by the
CPU backend from the kernels themselves.
"""

from __future__ import annotations

import json
import posixpath
import re

from thousand.bench.ledger import ROOT
from thousand.site import charts

ACCESS_DIR = ROOT / "docs" / "assets" / "access"
DIRECTIVE = re.compile(r"^<!-- access:([\w-]+) -->$", re.M)

TEXT = {
    "zh": {
        "global": "{title}：一个线程束要 {asked} 字节，落在 {sectors} 个 32 字节扇区"
        "（{lines} 条 128 字节缓存行）里，搬运的数据有 {pct:.0f}% 被用上",
        "shared": "{title}：32 个线程落在 {distinct} 个不同的存储体上，"
        "{conflict} 路冲突（一次访问拆成 {conflict} 次）",
        "none": "{title}：32 个线程落在 {distinct} 个不同的存储体上，没有冲突",
        "source": "由 CPU 后端跟踪第 0 个线程块的第 0 个线程束得到（`{line}`）",
        "launch": "{title}：{gx} × {gy} 个线程块，每块 {bx} × {by} 个线程，"
        "盖住 {rows} 行 × {cols} 列的数组：{threads} 个线程对 {n} 个元素，"
        "落在数组外的 {idle} 个线程被边界检查拦下，什么也不写",
        "source_launch": "由 CPU 后端跟踪整个启动的每一次写入得到（`{line}`）："
        "颜色是写入该元素的线程块，标注是线程的 threadIdx (x, y)；"
        "与核函数自己写下的 blockIdx、threadIdx 逐一核对过",
    },
    "en": {
        "global": "{title}: one warp asks for {asked} bytes, spread over {sectors} "
        "32-byte sectors ({lines} 128-byte lines); {pct:.0f}% of the bytes moved "
        "are used",
        "shared": "{title}: 32 lanes hit {distinct} different banks: a {conflict}-way "
        "conflict (one access becomes {conflict})",
        "none": "{title}: 32 lanes hit {distinct} different banks: no conflict",
        "source": "traced by the CPU backend, warp 0 of block 0 (`{line}`)",
        "launch": "{title}: a grid of {gx} × {gy} blocks of {bx} × {by} threads "
        "over a {rows} × {cols} array: {threads} threads for {n} elements; the "
        "bounds check stops the {idle} that fall outside, and they write nothing",
        "source_launch": "traced by the CPU backend, every store of the whole launch "
        "(`{line}`): the colour is the block that stored to the element, the label "
        "the thread's threadIdx (x, y); checked against the blockIdx and threadIdx "
        "the kernel wrote itself",
    },
}


# The pictures' own words, in each language.
CHART = {
    "zh": {
        "line": "触及的 128 字节缓存行",
        "bank": "共享内存存储体",
        "lane": "lane（线程束中的线程）",
        "used": "{sectors} 个扇区，用上 {pct:.0f}%",
        "conflict": "{conflict} 路冲突",
        "no_conflict": "没有冲突",
        "column": "x：列（threadIdx.x 变得最快）",
        "row": "y：行",
        "launch": "{title}：网格 ({gx}, {gy})，线程块 ({bx}, {by})；"
        "红框：{rows} × {cols} 的数组，斜线：空闲线程",
    },
    "en": {
        "line": "128-byte line touched",
        "bank": "shared-memory bank",
        "lane": "lane (thread of the warp)",
        "used": "{sectors} sectors, {pct:.0f}% used",
        "conflict": "{conflict}-way conflict",
        "no_conflict": "no conflict",
        "column": "x: column (threadIdx.x varies fastest)",
        "row": "y: row",
        "launch": "{title}: grid ({gx}, {gy}), block ({bx}, {by}); red: the {rows} x "
        "{cols} array, hatched: idle threads",
    },
}


def names() -> list[str]:
    return sorted(p.stem for p in ACCESS_DIR.glob("*.json"))


def load(name: str) -> dict:
    path = ACCESS_DIR / f"{name}.json"
    if not path.exists():
        raise ValueError(
            f"no access picture {name!r}: run `python -m thousand.cpu.pictures`"
        )
    return json.loads(path.read_text())


def describe(panel: dict, lang: str) -> str:
    t = TEXT[lang]
    if panel["space"] == "launch":
        (gx, gy), (bx, by), (rows, cols) = panel["grid"], panel["block"], panel["shape"]
        threads = gx * gy * bx * by
        return t["launch"].format(
            title=f"`{panel['title']}`",
            gx=gx,
            gy=gy,
            bx=bx,
            by=by,
            rows=rows,
            cols=cols,
            threads=threads,
            n=rows * cols,
            idle=threads - rows * cols,
        )
    if panel["space"] == "global":
        asked = len(panel["offsets"]) * panel["bytes"]
        return t["global"].format(
            title=f"`{panel['title']}`",
            asked=asked,
            sectors=panel["sectors"],
            lines=panel["lines"],
            pct=100 * panel["efficiency"],
        )
    distinct = len(set(panel["banks"]))
    key = "shared" if panel["conflict"] > 1 else "none"
    return t[key].format(
        title=f"`{panel['title']}`", distinct=distinct, conflict=panel["conflict"]
    )


def render_page(markdown: str, page_uri: str, lang: str) -> str:
    def replace(m: re.Match) -> str:
        data = load(m.group(1))
        target = f"assets/access/{data['name']}.svg"
        rel = posixpath.relpath(target, posixpath.dirname(page_uri) or ".")
        alt = "; ".join(p["title"] for p in data["panels"])
        items = [f"- {describe(p, lang)}" for p in data["panels"]]
        launch = all(p["space"] == "launch" for p in data["panels"])
        source = TEXT[lang]["source_launch" if launch else "source"].format(
            line=", ".join(p["line"] for p in data["panels"])
        )
        return f"![{alt}]({rel})\n\n" + "\n".join(items) + f"\n\n*{source}*\n"

    return DIRECTIVE.sub(replace, markdown)


def draw(name: str, lang: str = "en") -> bytes:
    """The picture, its words in `lang`, charts.WIDTH wide: panels one under
    another, so that none shrinks to a fraction of a phone's width."""
    with charts.style() as plt:
        panels = load(name)["panels"]
        if all(p["space"] == "launch" for p in panels):
            return _draw_launch(plt, panels, CHART[lang])
        return _draw_panels(plt, panels, CHART[lang])


def _draw_panels(plt, panels, t) -> bytes:
    fig, axes = plt.subplots(
        len(panels), 1, figsize=(charts.WIDTH, 2.9 * len(panels)), dpi=100,
        squeeze=False,
    )  # fmt: skip
    # Global panels share one scale, so a warp confined to one line looks it.
    spans = [
        (max(p["offsets"]) - min(p["offsets"])) // 128
        for p in panels
        if p["space"] == "global"
    ]
    for ax, p in zip(axes[:, 0], panels, strict=True):
        lanes = p["lanes"]
        if p["space"] == "global":
            base = min(p["offsets"]) // 128 * 128
            y = [(o - base) // 128 for o in p["offsets"]]
            ax.scatter(lanes, y, s=14, color="#3f51b5")
            ax.set_ylim(-0.5, max(spans) + 0.5)
            # lines are counted: whole-number ticks (one line would get -1 to 1
            # in quarters otherwise)
            top = max(spans)
            ax.set_yticks(range(0, top + 1, max(1, -(-(top + 1) // 8))))
            ax.set_ylabel(t["line"])
            note = t["used"].format(sectors=p["sectors"], pct=100 * p["efficiency"])
        else:
            ax.scatter(lanes, p["banks"], s=14, color="#e65100")
            ax.set_ylim(-1, 32)
            ax.set_ylabel(t["bank"])
            note = (
                t["conflict"].format(conflict=p["conflict"])
                if p["conflict"] > 1
                else t["no_conflict"]
            )
        ax.set_xlim(-1, 32)
        ax.set_xlabel(t["lane"])
        ax.set_title(f"{p['title']}\n{note}")
        ax.grid(True, alpha=0.3)
    charts.lay_out(fig)
    return charts.svg(fig)


def _draw_launch(plt, panels, t) -> bytes:
    """A launch map: one cell per thread of the grid, coloured by its block, labelled
    with its threadIdx; cells past the array's edge are the idle threads."""
    from matplotlib.patches import Rectangle

    (gx, gy), (bx, by) = panels[0]["grid"], panels[0]["block"]
    width, height = gx * bx, gy * by  # the grid's extent in threads
    # inches: the grid fills the chart's width but for the labels either side
    cell = (charts.WIDTH - 1.75) / width
    fig, axes = plt.subplots(
        len(panels),
        1,
        figsize=(charts.WIDTH, (cell * height + 2.1) * len(panels)),
        dpi=100,
        squeeze=False,
    )
    colours = plt.get_cmap("tab10").colors
    small = charts.MIN_PT
    for ax, p in zip(axes[:, 0], panels, strict=True):
        rows, cols = p["shape"]
        for r in range(height):
            for c in range(width):
                inside = r < rows and c < cols
                if inside and p["block_x"][r][c] >= 0:
                    block = p["block_x"][r][c] + p["block_y"][r][c] * gx
                    ax.add_patch(
                        Rectangle((c, r), 1, 1, color=colours[block % 10], alpha=0.55)
                    )
                    label = f"{p['thread_x'][r][c]},{p['thread_y'][r][c]}"
                    ax.text(c + 0.5, r + 0.6, label, ha="center", va="center",
                            fontsize=small)  # fmt: skip
                else:  # a thread past the edge (or, in a buggy launch, no writer)
                    ax.add_patch(
                        Rectangle(
                            (c, r),
                            1,
                            1,
                            fill=False,
                            hatch="///",
                            edgecolor="#bbbbbb",
                            linewidth=0,
                        )  # fmt: skip
                    )
        for k in range(gx + 1):  # block boundaries
            ax.axvline(k * bx, color="black", linewidth=1.6)
        for k in range(gy + 1):
            ax.axhline(k * by, color="black", linewidth=1.6)
        ax.plot([0, cols, cols, 0, 0], [0, 0, rows, rows, 0], color="#c62828",
                linewidth=2.2)  # fmt: skip
        ax.set_xlim(0, width)
        ax.set_ylim(height, 0)  # row 0 at the top, as the array is printed
        # the blocks' numbers above and beside the grid, clear of the cells' labels
        ax.set_xticks([c + 0.5 for c in range(width)], range(width))
        ax.set_yticks([r + 0.5 for r in range(height)], range(height))
        top = ax.secondary_xaxis("top")
        top.set_xticks(
            [(i + 0.5) * bx for i in range(gx)],
            [f"blockIdx.x = {i}" for i in range(gx)],
        )
        top.tick_params(length=0)
        right = ax.secondary_yaxis("right")
        right.set_yticks(
            [(j + 0.5) * by for j in range(gy)],
            [f"blockIdx.y = {j}" for j in range(gy)],
        )
        right.tick_params(length=0)
        ax.set_xlabel(t["column"])
        ax.set_ylabel(t["row"])
        ax.set_aspect("equal")
        title = t["launch"].format(
            title=p["title"], gx=gx, gy=gy, bx=bx, by=by, rows=rows, cols=cols
        )
        ax.set_title(charts.wrap(title), pad=22)  # above the blocks' numbers
    charts.lay_out(fig)
    return charts.svg(fig)
