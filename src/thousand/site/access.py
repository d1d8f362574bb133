"""Draw the memory-access pictures recorded by `python -m thousand.cpu.pictures`.

A page asks for one with `<!-- access:NAME -->` on a line of its own; the hook adds
assets/access/NAME.svg to the site and puts the image with a one-line reading of
each panel in the page's language. The numbers come from the JSON, traced by the
CPU backend from the kernels themselves.
"""

from __future__ import annotations

import io
import json
import posixpath
import re

from thousand.bench.ledger import ROOT

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
    },
    "en": {
        "global": "{title}: one warp asks for {asked} bytes, spread over {sectors} "
        "32-byte sectors ({lines} 128-byte lines); {pct:.0f}% of the bytes moved "
        "are used",
        "shared": "{title}: 32 lanes hit {distinct} different banks: a {conflict}-way "
        "conflict (one access becomes {conflict})",
        "none": "{title}: 32 lanes hit {distinct} different banks: no conflict",
        "source": "traced by the CPU backend, warp 0 of block 0 (`{line}`)",
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
        source = TEXT[lang]["source"].format(
            line=", ".join(p["line"] for p in data["panels"])
        )
        return f"![{alt}]({rel})\n\n" + "\n".join(items) + f"\n\n*{source}*\n"

    return DIRECTIVE.sub(replace, markdown)


def draw(name: str) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = load(name)["panels"]
    fig, axes = plt.subplots(
        1, len(panels), figsize=(4.2 * len(panels), 3.6), dpi=100, squeeze=False
    )
    # Global panels share one scale, so a warp confined to one line looks it.
    spans = [
        (max(p["offsets"]) - min(p["offsets"])) // 128
        for p in panels
        if p["space"] == "global"
    ]
    for ax, p in zip(axes[0], panels, strict=True):
        lanes = p["lanes"]
        if p["space"] == "global":
            base = min(p["offsets"]) // 128 * 128
            y = [(o - base) // 128 for o in p["offsets"]]
            ax.scatter(lanes, y, s=14, color="#3f51b5")
            ax.set_ylim(-1, max(spans) + 1)
            ax.set_ylabel("128-byte line touched")
            note = f"{p['sectors']} sectors, {100 * p['efficiency']:.0f}% used"
        else:
            ax.scatter(lanes, p["banks"], s=14, color="#e65100")
            ax.set_ylim(-1, 32)
            ax.set_ylabel("shared-memory bank")
            note = (
                f"{p['conflict']}-way conflict" if p["conflict"] > 1 else "no conflict"
            )
        ax.set_xlim(-1, 32)
        ax.set_xlabel("lane (thread of the warp)")
        ax.set_title(f"{p['title']}\n{note}", fontsize=9)
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    return buf.getvalue()
