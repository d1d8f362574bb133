"""The benchmarks pages: every kernel version the ledgers record.

docs/zh/benchmarks/index.md and docs/en/benchmarks/index.md, the overview, hold the
line

    <!-- benchmarks -->

which the hook replaces with the kernel families listed by track and post, each
linked to its figures, then for every ledger in docs/assets/results/*.json the
device, its measured and theoretical bandwidth, the runs and the benchmark targets.

The figures are on one page per post, generated at build time as
benchmarks/<post slug>.md (`pages`): for each family a bar chart, a table and the
baseline every version is measured against (matmul_v8 against cuBLAS with TF32 on,
the other versions against cuBLAS with TF32 off). A family belongs to the post that
shows its ladder, else to the first post in track order with a results table of it,
else to the first that includes its sources; families no post shows go to
benchmarks/other-kernels.md. Every figure comes from a ledger; one an entry lacks
is shown as "–".

The bar charts are HTML, not pictures: rows of spans that
docs/overrides/stylesheets/extra.css lays out. Their text is the page's text, in the
page's language and at its font size, so it stays legible on a phone, and a bar's
baseline is marked on the bar's own row.
"""

from __future__ import annotations

import html
import json
import math
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from thousand.bench import ledger as L
from thousand.site import render, tracks
from thousand.site.render import DASH

DIRECTIVE = re.compile(r"^<!-- benchmarks -->$", re.M)
INDEX = "benchmarks/index.md"
OTHER = "other-kernels"  # the page of families no post shows

# Without these a GPU section cannot be drawn; the GPU run always writes them.
DEVICE_REQUIRED = (
    "name",
    "compute_capability",
    "sm_count",
    "total_memory_bytes",
    "copy_peak_gbps",
)
RUN_REQUIRED = ("date", "commit")

# A post's kernels, by how it shows them: a ladder makes it the family's home before
# a results table, and a table before an included source.
_INCLUDE = re.compile(r'--8<-- "src/thousand/kernels/(\w+)\.(?:cu|py)[:"]')
_SHOWS = {"ladder": 0, "table": 1, "targets": 1}
_SOURCE = 2

TEXT = {
    "zh": {
        "by_point": "按知识点查找",
        "by_point_lead": "一个核函数族在几篇文章里出现时，数字放在讲它最细的那一页；"
        "没有链接的知识点，用到的核函数族都在别的页上。",
        "other": "其他核函数",
        "other_lead": "还没有文章展示的核函数族。",
        "other_list": "还没有文章展示的核函数族：{families}",
        "gpu_line": "{name}，计算能力 {cc}（{sm}），{sms} 个 SM，显存 {mem}，L2 {l2}",
        "gpu": "设备",
        "bandwidth": "显存带宽",
        "bandwidth_line": "实测 {copy}（复制核函数 {kernel}），理论 {peak}{formula}"
        "{ratio}",
        "formula": "（2 × {clock} MHz × {bus} 位总线）",
        "ratio": "；实测为理论的 {pct:.1f}%",
        "software": "软件",
        "software_line": "驱动 {driver}（CUDA {cuda}），nvcc {nvcc}，Python {python}，"
        "PyCUDA {pycuda}，NumPy {numpy}，PyTorch {torch}",
        "run": "运行",
        "run_line": "{date}，提交 {commit}，{command}",
        "runs_line": "{n} 次，{start} 至 {end}；每张表下注明出自哪一次",
        "runs_all": "全部 {n} 次运行",
        "run_peak": "；这次运行中复制核函数 {copy}",
        "colon": "：",
        "join": "、",
        "targets": "基准目标",
        "no_targets": "这次运行没有记录基准目标。",
        # a family page
        "title": "实测：{point} · {title}",
        "title_other": "实测：其他核函数",
        "nav_other": "其他核函数",
        "description": "{point} {title}中各核函数版本的实测：时间、速率，以及和"
        "实测峰值、PyTorch、NumPy 的比较。",
        "description_other": "还没有文章展示的核函数族的实测：时间、速率，以及和"
        "实测峰值、PyTorch、NumPy 的比较。",
        "post_line": "文章：[{name}]({link})。",
        "on_this_page": "本页",
        "elsewhere": "文中也用到",
        "about": "各列的含义和计时方法见[总览]({index}#columns)。",
        "device_of": "设备：{gpus}。",
        # baselines
        "baseline": "基线：{name}，在同一块 GPU 上。",
        "baseline_own": "`{kernels}` 的基线是 {name}。",
        "baseline_none": "PyTorch 没有同样的运算，这一族只和 NumPy 比。",
        "peak_line": "虚线是同一次运行里复制核函数的带宽（实测峰值）。",
        "baseline_default": "PyTorch 做同一运算",
        # render.LIBRARY_NAMES says "cuBLAS, TF32 off": here, what PyTorch calls
        "cublas": "cuBLAS（经 PyTorch），{what}",
        "cublas_what": {"TF32 off": "关闭 TF32", "TF32 on": "开启 TF32"},
        "pycuda_name": "PyCUDA 的 gpuarray.sum",
        "peak_name": "复制核函数（实测峰值）",
        "scale": "{unit}",
        "scale_log": "{unit}，对数刻度",
        "chart_label": "{family} 各版本的 {unit}，每行标出它的基线",
        "size_block": "规模 {size}，线程块 {block}。",
        "size": "规模 {size}。",
        "cols": {
            "version_teaches": "版本与要点",
            "block": "线程块",
            "time": "时间 (ms)",
            "rate": "速率",
            "pct_copy": "占复制",
            "pct_peak": "占理论峰值",
            "numpy": "比 NumPy 快",
            "torch": "占基线",
            "pycuda": "比 gpuarray.sum 快",
            "check": "正确性检查",
        },
    },
    "en": {
        "by_point": "Find a kernel by point",
        "by_point_lead": "A family that several posts use has its figures on the "
        "page of the post that goes into it most; a point without a link uses only "
        "families whose figures are on other pages.",
        "other": "Other kernels",
        "other_lead": "Kernel families no post shows yet.",
        "other_list": "Kernel families no post shows yet: {families}",
        "gpu_line": "{name}, compute capability {cc} ({sm}), {sms} SMs, {mem} of "
        "memory, {l2} of L2",
        "gpu": "Device",
        "bandwidth": "Memory bandwidth",
        "bandwidth_line": "{copy} measured (copy kernel {kernel}), {peak} "
        "theoretical{formula}{ratio}",
        "formula": " (2 × {clock} MHz × {bus}-bit bus)",
        "ratio": "; measured is {pct:.1f}% of theoretical",
        "software": "Software",
        "software_line": "driver {driver} (CUDA {cuda}), nvcc {nvcc}, Python {python}, "
        "PyCUDA {pycuda}, NumPy {numpy}, PyTorch {torch}",
        "run": "Run",
        "run_line": "{date}, commit {commit}, {command}",
        "runs_line": "{n}, {start} to {end}; each table names the one it comes from",
        "runs_all": "All {n} runs",
        "run_peak": "; the copy kernel ran at {copy} in this run",
        "colon": ": ",
        "join": ", ",
        "targets": "Targets",
        "no_targets": "This run recorded no benchmark targets.",
        "title": "Measured: {point} · {title}",
        "title_other": "Measured: other kernels",
        "nav_other": "Other kernels",
        "description": "Every kernel version of {point}, {title}, as measured: "
        "time, rate, and how it compares with the measured peak, PyTorch and NumPy.",
        "description_other": "Kernel families no post shows yet, as measured: time, "
        "rate, and how they compare with the measured peak, PyTorch and NumPy.",
        "post_line": "Post: [{name}]({link}).",
        "on_this_page": "On this page",
        "elsewhere": "The post also uses",
        "about": "What the columns mean and how the kernels were timed: "
        "[overview]({index}#columns).",
        "device_of": "Device: {gpus}.",
        "baseline": "Baseline: {name}, on the same GPU.",
        "baseline_own": "`{kernels}` is measured against {name}.",
        "baseline_none": "PyTorch has no such operation: this family is compared "
        "with NumPy only.",
        "peak_line": "Dashed: the copy kernel in the same run (the measured peak).",
        "baseline_default": "PyTorch doing the same operation",
        "cublas": "cuBLAS through PyTorch, {what}",
        "cublas_what": {},
        "pycuda_name": "PyCUDA's gpuarray.sum",
        "peak_name": "copy kernel (measured peak)",
        "scale": "{unit}",
        "scale_log": "{unit}, log scale",
        "chart_label": "{unit} of each version of {family}, each row marked with "
        "its baseline",
        "size_block": "Size {size}, block {block}.",
        "size": "Size {size}.",
        "cols": {
            "version_teaches": "version: what it teaches",
            "block": "block",
            "time": "time (ms)",
            "rate": "rate",
            "pct_copy": "% of copy",
            "pct_peak": "% of theoretical",
            "numpy": "× NumPy",
            "torch": "% of baseline",
            "pycuda": "× gpuarray.sum",
            "check": "checked",
        },
    },
}


class LedgerError(ValueError):
    """A ledger this page cannot render, with the file and what is missing."""


def _require(mapping, fields, where: str, source: str) -> None:
    if not isinstance(mapping, dict):
        raise LedgerError(f"{source}: no {where!r} section")
    for name in fields:
        if mapping.get(name) is None:
            raise LedgerError(
                f"{source}: {where} has no {name!r} (the GPU run writes it: "
                f"redo `python -m thousand.bench`, do not edit the ledger)"
            )


def validate(ledger: dict, source: str) -> dict:
    """The ledger itself, or LedgerError naming the file and the missing field."""
    _require(ledger.get("device"), DEVICE_REQUIRED, "device", source)
    _require(ledger.get("run"), RUN_REQUIRED, "run", source)
    kernels = ledger.get("kernels")
    if not isinstance(kernels, dict) or not kernels:
        raise LedgerError(f"{source}: no kernels recorded")
    for name, entry in kernels.items():
        _require(entry, ("family", "version"), f"kernels.{name}", source)
    return ledger


def load_all(paths: list[Path] | None = None) -> list[dict]:
    """Every ledger in docs/assets/results (or `paths`), checked, as schema 2."""
    paths = L.ledger_files() if paths is None else paths
    if not paths:
        raise LedgerError(
            f"no ledger in {L.RESULTS_DIR}: run `python -m thousand.bench` on a GPU"
        )
    ledgers = []
    for p in paths:
        try:
            ledgers.append(L.upgrade(validate(L.load(p), Path(p).name)))
        except json.JSONDecodeError as e:
            raise LedgerError(f"{Path(p).name}: not valid JSON ({e})") from e
    return ledgers


def gpu_slug(ledger: dict) -> str:
    d = ledger["device"]
    return d.get("slug") or L.slug(d["name"])


# -- which page a family is on ----------------------------------------------------


@dataclass
class Page:
    """One generated page: a post's families (or the families no post shows)."""

    slug: str
    point: str | None  # None: the page of other kernels
    post_uri: str | None  # blog/posts/<slug>.md
    shows: list[str] = field(default_factory=list)  # every family the post shows
    home: list[str] = field(default_factory=list)  # those whose figures are here

    @property
    def uri(self) -> str:
        return f"benchmarks/{self.slug}.md"


def _shown(markdown: str, families: set[str]) -> dict[str, int]:
    """Family -> how the post shows it (_SHOWS, _SOURCE), in the post's order."""
    found: list[tuple[int, str, int]] = []  # (position, family, rank)
    for m in render.DIRECTIVE.finditer(markdown):
        rank = _SHOWS.get(m.group(1))
        if rank is not None:
            found += [(m.start(), f, rank) for f in m.group(2).split()]
    found += [(m.start(), m.group(1), _SOURCE) for m in _INCLUDE.finditer(markdown)]
    out: dict[str, int] = {}
    for _, family, rank in sorted(found):
        if family in families:
            out[family] = min(rank, out.get(family, rank))
    return out


def catalogue(families: set[str], docs: Path | None = None) -> list[Page]:
    """The generated pages, in track order (tracks.yml), the other kernels last.
    Both languages' posts are read, so both builds get the same pages."""
    docs = docs or L.ROOT / "docs"
    shown: dict[str, dict[str, int]] = {}  # point -> family -> rank
    slugs: dict[str, str] = {}
    for lang in ("zh", "en"):
        for point, post in tracks.written(docs / lang).items():
            text = (docs / lang / post["uri"]).read_text(encoding="utf-8")
            mine = shown.setdefault(point, {})
            for family, rank in _shown(text, families).items():
                mine[family] = min(rank, mine.get(family, rank))
            slugs[point] = posixpath.splitext(posixpath.basename(post["uri"]))[0]
    order = [p["id"] for t in tracks.tracks().values() for p in t["points"]]
    pages = [
        Page(slugs[p], p, f"blog/posts/{slugs[p]}.md", list(shown[p]))
        for p in order
        if shown.get(p)
    ]
    homes: dict[str, Page] = {}
    for rank in sorted({*_SHOWS.values(), _SOURCE}):
        for page in pages:
            for family in page.shows:
                if family not in homes and shown[page.point][family] == rank:
                    homes[family] = page
    rest = sorted(families - set(homes))
    if rest:
        other = Page(OTHER, None, None, rest)
        pages.append(other)
        homes.update(dict.fromkeys(rest, other))
    for page in pages:
        page.home = [f for f in page.shows if homes[f] is page]
    return pages


def _families_of(ledgers: list[dict]) -> set[str]:
    return {k["family"] for x in ledgers for k in x["kernels"].values()}


def _homes(pages: list[Page]) -> dict[str, Page]:
    return {f: p for p in pages for f in p.home}


def _point_title(point: str, lang: str) -> str:
    for t in tracks.tracks().values():
        for p in t["points"]:
            if p["id"] == point:
                return p[lang]
    raise tracks.TrackError(f"point {point!r} is not in {tracks.TRACKS_FILE.name}")


def nav_title(page: Page, lang: str) -> str:
    if page.point is None:
        return TEXT[lang]["nav_other"]
    return f"{page.point} · {_point_title(page.point, lang)}"


def _link(target: str, page_uri: str) -> str:
    return posixpath.relpath(target, posixpath.dirname(page_uri) or ".")


# -- the bar chart ------------------------------------------------------------------


def _fmt(v: float) -> str:
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2g}"


def _tick(v: float) -> str:
    """An axis label: 0, 500, 2k, 10k, 1M, 0.01."""
    if v >= 1e6:
        return f"{v / 1e6:g}M"
    if v >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


def _scale(values: list[float], bars: list[float]):
    """(position in % of the track for a value, the axis ticks, log or not).
    Logarithmic when a linear axis would leave more than a third of the bars
    under a tenth of its length (the rungs of a ladder differ by orders of
    magnitude); linear otherwise, where the differences near the peak show."""
    lo, hi = min(values), max(values)
    if sum(v < 0.1 * hi for v in bars) > len(bars) / 3:
        a = math.floor(math.log10(lo))
        b = max(math.log10(hi) + 0.08, a + 1)  # room for the longest bar's end
        step = 1 if b - a <= 6 else 2
        ticks = [10.0**e for e in range(a, math.floor(b) + 1, step)]

        def pos(v: float) -> float:
            return 100 * (math.log10(v) - a) / (b - a)

        return pos, ticks, True
    step = 10 ** math.floor(math.log10(hi / 4))
    for m in (1, 2, 2.5, 5, 10):
        if hi / (m * step) <= 5:
            step *= m
            break
    top = step * math.ceil(hi * 1.02 / step)
    ticks = [i * step for i in range(int(round(top / step)) + 1)]
    return (lambda v: 100 * v / top), ticks, False


def bars_html(
    rows: list[tuple[str, float, list[tuple[str, float]]]],
    keys: dict[str, str],
    unit: str,
    label: str,
    t: dict,
    peak: float | None = None,
) -> str:
    """Rows of (name, value, [(mark kind, value), ...]) as an HTML bar chart; each
    mark a short rule on its row, the peak one down every row; `keys` names each
    kind in the legend (in that order)."""
    values = [v for _, v, _ in rows] + [v for _, _, ms in rows for _, v in ms]
    values = [v for v in values + [peak or 0] if v and v > 0]
    pos, ticks, log = _scale(values, [v for _, v, _ in rows if v > 0])
    span = lambda v: f"{max(0.0, min(100.0, pos(v))):.2f}%"  # noqa: E731
    scale = t["scale_log" if log else "scale"].format(unit=unit)
    out = [
        f'<figure class="tp-bars" data-search-exclude role="img" '
        f'aria-label="{html.escape(label)}">',
        '<div class="tp-bars__row tp-bars__axis"><span></span>'
        '<span class="tp-bars__track">'
        + "".join(
            f'<span class="tp-bars__tick" style="left:{span(v)}">{_tick(v)}</span>'
            for v in ticks
        )
        + "</span><span></span></div>",
    ]
    for name, value, marks in rows:
        cells = [f'<span class="tp-bars__bar" style="width:{span(value)}"></span>']
        if peak:
            cells.append(
                f'<span class="tp-bars__mark tp-bars__mark--peak" '
                f'style="left:{span(peak)}"></span>'
            )
        for kind, v in marks:
            cells.append(
                f'<span class="tp-bars__mark tp-bars__mark--{kind}" '
                f'style="left:{span(v)}" title="{html.escape(keys[kind])}: '
                f'{_fmt(v)} {unit}"></span>'
            )
        out.append(
            f'<div class="tp-bars__row"><span class="tp-bars__label">{name}</span>'
            f'<span class="tp-bars__track">{"".join(cells)}</span>'
            f'<span class="tp-bars__value">{_fmt(value)}</span></div>'
        )
    legend = [("peak", t["peak_name"])] if peak else []
    legend += [(kind, name) for kind, name in keys.items()]
    out.append(
        f'<figcaption><span class="tp-bars__unit">{html.escape(scale)}</span>'
        + "".join(
            f'<span class="tp-bars__key"><span class="tp-bars__swatch '
            f'tp-bars__mark--{kind}"></span>{html.escape(name)}</span>'
            for kind, name in legend
        )
        + "</figcaption>"
    )
    out.append("</figure>")
    return "\n".join(out) + "\n"


# -- one family on one GPU --------------------------------------------------------


def _compute_bound(entries: list[dict]) -> bool:
    """FLOP rates and no byte rates: GB/s and % of a bandwidth peak do not apply."""
    return any(k.get("gflops") is not None for k in entries) and all(
        k.get("gbps") is None for k in entries
    )


def _entries(ledger: dict, family: str) -> list[dict]:
    mine = [k for k in ledger["kernels"].values() if k["family"] == family]
    return sorted(mine, key=lambda k: k["version"])


def baseline_key(k: dict) -> str | None:
    """What PyTorch runs as this version's baseline: the version's own (matmul_v8:
    cuBLAS with TF32 on), else its family's where it has a name, else None."""
    own = k.get("torch_baseline")
    if own:
        return own
    return k["family"] if k["family"] in render.LIBRARY_NAMES else None


def _baseline_name(key: str | None, t: dict) -> str:
    if key is None:
        return t["baseline_default"]
    library, what = render.library_parts(key)
    if what and library in ("cuBLAS", "cuDNN"):
        what = t["cublas_what"].get(what, what)
        return t["cublas"].format(what=what).replace("cuBLAS", library)
    return render.LIBRARY_NAMES.get(key, key)


def _rate(k: dict, work: str, ms: str) -> float | None:
    """A baseline's rate for the version's work: its bytes or FLOPs over the
    baseline's recorded time."""
    if k.get(work) and k.get(ms):
        return k[work] / k[ms] / 1e6
    return None


def _chart(entries: list[dict], ledger: dict, t: dict) -> str:
    compute = _compute_bound(entries)
    unit, key, work = (
        ("GFLOP/s", "gflops", "flops") if compute else ("GB/s", "gbps", "bytes")
    )
    kinds: dict[str | None, str] = {}  # baseline -> mark kind
    keys: dict[str, str] = {}
    rows = []
    for k in entries:
        if k.get(key) is None:
            continue
        marks = []
        torch = _rate(k, work, "torch_ms")
        if torch:
            b = baseline_key(k)
            if b not in kinds:
                kinds[b] = f"b{len(kinds)}"
                keys[kinds[b]] = _baseline_name(b, t)
            marks.append((kinds[b], torch))
        pycuda = _rate(k, work, "pycuda_ms")
        if pycuda:
            keys["pycuda"] = t["pycuda_name"]
            marks.append(("pycuda", pycuda))
        rows.append((f"v{k['version']}", k[key], marks))
    if not rows:
        return ""
    peak = None if compute else L.run_of(ledger, entries[0]).get("copy_peak_gbps")
    label = t["chart_label"].format(family=entries[0]["family"], unit=unit)
    return bars_html(rows, keys, unit, label, t, peak=peak)


def _baseline_lines(entries: list[dict], compute: bool, t: dict) -> str:
    timed = [k for k in entries if k.get("torch_ms")]
    if not timed:
        said = t["baseline_none"]
    else:
        by_key: dict[str | None, list[str]] = {}
        for k in timed:
            by_key.setdefault(baseline_key(k), []).append(
                f"{k['family']}_v{k['version']}"
            )
        (first, _), *rest = sorted(by_key.items(), key=lambda kv: -len(kv[1]))
        said = t["baseline"].format(name=_baseline_name(first, t))
        for b, kernels in rest:
            said += " " + t["baseline_own"].format(
                kernels="`, `".join(kernels), name=_baseline_name(b, t)
            )
    if not compute:
        said += " " + t["peak_line"]
    return said + "\n"


def _torch_cell(k: dict, family_key, t: dict) -> str:
    cell = render.CELLS["torch"](k, {}, t)
    b = baseline_key(k)
    if cell != DASH and b != family_key:
        cell += f"<br><small>{_baseline_name(b, t)}</small>"
    return cell


def _table(entries: list[dict], ledger: dict, t: dict) -> tuple[str, str]:
    """The family's table, and the line under it for what every row shares."""
    compute = _compute_bound(entries)
    device = ledger["device"]
    blocks = {render.CELLS["block"](k, device, t) for k in entries}
    sizes = {tuple(k.get("size") or ()) for k in entries}
    columns = ["version_teaches"]
    if len(blocks) > 1:
        columns.append("block")
    if len(sizes) > 1:
        columns.append("size")
    columns += ["time", "rate"]
    if not compute:
        columns += ["pct_copy", "pct_peak"]
    columns += ["numpy", "torch"]
    if any(k.get("speedup_vs_pycuda") for k in entries):
        columns.append("pycuda")
    passed = _all_passed(entries, t)
    if not passed:
        columns.append("check")
    # the baseline most rows share; a row measured against another names it
    keys = [baseline_key(k) for k in entries if k.get("torch_ms")]
    family_key = max(set(keys), key=keys.count) if keys else None
    # one unit for the whole family: in the header, the cells bare figures
    unit, key = ("GFLOP/s", "gflops") if compute else ("GB/s", "gbps")
    cols = {**render.TEXT[t["lang"]]["cols"], **t["cols"], "rate": unit}
    cell = {
        "torch": lambda k: _torch_cell(k, family_key, t),
        "rate": lambda k: render._get(k, key, lambda x: f"{x:,.0f}"),
    }
    out = [
        "| " + " | ".join(cols[c] for c in columns) + " |",
        "|" + "".join("---:|" if c in render.NUMERIC else "---|" for c in columns),
    ]
    for k in entries:
        cells = [
            cell[c](k) if c in cell else render.CELLS[c](k, device, t) for c in columns
        ]
        out.append("| " + " | ".join(cells) + " |")
    said = []
    if len(sizes) == 1 and () not in sizes:
        size = " × ".join(map(render._power_of_two, next(iter(sizes))))
        if len(blocks) == 1:
            said.append(t["size_block"].format(size=size, block=next(iter(blocks))))
        else:
            said.append(t["size"].format(size=size))
    if passed:
        said.append(passed)
    return "\n".join(out) + "\n", render.TEXT[t["lang"]]["gap"].join(said)


def _all_passed(entries: list[dict], t: dict) -> str | None:
    checks = [k.get("check") or {} for k in entries]
    if not all(c.get("passed") and c.get("cases") for c in checks):
        return None
    counts = [str(n) for n in sorted({c["cases"] for c in checks})]
    cases = counts[-1]
    if len(counts) > 1:
        cases = t["join"].join(counts[:-1]) + t["and"] + cases
    return t["all_passed"].format(cases=cases)


def _texts(lang: str) -> dict:
    return {**render.TEXT[lang], **TEXT[lang], "lang": lang}


def render_family(family: str, ledgers: list[dict], lang: str) -> str:
    """A family's section: per GPU that recorded it, the baseline, the chart, the
    table, what every row shares and the run, and the family's targets."""
    t = _texts(lang)
    parts = [f"## `{family}` {{ #{family} }}\n"]
    having = [x for x in ledgers if _entries(x, family)]
    for ledger in having:
        entries = _entries(ledger, family)
        if len(ledgers) > 1:
            parts.append(f"### {ledger['device']['name']}\n")
        table, shared = _table(entries, ledger, t)
        runs = render.measured_in(ledger, entries, t).strip()
        parts.append(_baseline_lines(entries, _compute_bound(entries), t))
        parts.append(_chart(entries, ledger, t))
        parts.append(table)
        parts.append(t["gap"].join(x for x in (shared, runs) if x) + "\n")
        mine = [
            x
            for x in ledger.get("targets") or []
            if x["kernel"].rsplit("_v", 1)[0] == family
        ]
        if mine:
            parts.append(render.target_lines(mine, t))
    return "\n".join(parts)


def render_post_page(page: Page, pages: list[Page], ledgers: list[dict], lang: str):
    """The Markdown of one generated page."""
    t = _texts(lang)
    homes = _homes(pages)
    if page.point is None:
        title, description = t["title_other"], t["description_other"]
        lead = [t["other_lead"]]
    else:
        name = _point_title(page.point, lang)
        title = t["title"].format(point=page.point, title=name)
        description = t["description"].format(point=page.point, title=name)
        post = _link(page.post_uri, page.uri)
        lead = [t["post_line"].format(name=f"{page.point} · {name}", link=post)]
    gpus = t["join"].join(
        f"[{x['device']['name']}](index.md#{gpu_slug(x)})" for x in ledgers
    )
    lead.append(t["device_of"].format(gpus=gpus))
    lead.append(t["about"].format(index="index.md"))
    sep = "" if lang == "zh" else " "
    body = [sep.join(lead) + "\n"]
    if len(page.home) > 1:
        links = t["join"].join(f"[`{f}`](#{f})" for f in page.home)
        body.append(f"{t['on_this_page']}{t['colon']}{links}\n")
    elsewhere = [f for f in page.shows if f not in page.home]
    if elsewhere:
        links = t["join"].join(
            f"[`{f}`]({_link(homes[f].uri, page.uri)}#{f})" for f in elsewhere
        )
        body.append(f"{t['elsewhere']}{t['colon']}{links}\n")
    body += [render_family(f, ledgers, lang) for f in page.home]
    front = f"---\ndescription: {json.dumps(description, ensure_ascii=False)}\n---\n"
    return front + f"\n# {title}\n\n" + "\n".join(body)


def pages(lang: str, ledgers: list[dict] | None = None) -> dict[str, str]:
    """Every generated page's Markdown, by its path under docs/<lang>."""
    ledgers = load_all() if ledgers is None else ledgers
    found = catalogue(_families_of(ledgers))
    return {p.uri: render_post_page(p, found, ledgers, lang) for p in found if p.home}


def nav(lang: str, ledgers: list[dict] | None = None) -> list[dict[str, str]]:
    """The generated pages as nav entries, in the order of `catalogue`."""
    ledgers = load_all() if ledgers is None else ledgers
    found = catalogue(_families_of(ledgers))
    return [{nav_title(p, lang): p.uri} for p in found if p.home]


# -- the overview ---------------------------------------------------------------------


def _device_facts(ledger: dict, t: dict) -> str:
    d = ledger["device"]

    def val(key, fmt=str):
        return DASH if d.get(key) is None else fmt(d[key])

    gbps = "{:,.0f} GB/s".format
    formula = (
        t["formula"].format(
            clock=f"{d['memory_clock_mhz']:,.0f}", bus=f"{d['memory_bus_bits']:,}"
        )
        if d.get("memory_clock_mhz") and d.get("memory_bus_bits")
        else ""
    )
    peak = d.get("peak_bandwidth_gbps")
    ratio = t["ratio"].format(pct=100 * d["copy_peak_gbps"] / peak) if peak else ""
    kernel = _copy_kernel(ledger)
    lines = [
        (
            t["gpu"],
            t["gpu_line"].format(
                name=d["name"],
                cc=d["compute_capability"],
                sm=f"sm_{str(d['compute_capability']).replace('.', '')}",
                sms=d["sm_count"],
                mem=f"{d['total_memory_bytes'] / 2**30:.0f} GiB",
                l2=val("l2_cache_bytes", lambda b: f"{b / 2**20:.0f} MiB"),
            ),
        ),
        (
            t["bandwidth"],
            t["bandwidth_line"].format(
                copy=gbps(d["copy_peak_gbps"]),
                kernel=f"`{kernel}`" if kernel else DASH,
                peak=val("peak_bandwidth_gbps", gbps),
                formula=formula,
                ratio=ratio,
            ),
        ),
        (
            t["software"],
            t["software_line"].format(
                driver=val("driver_release"),
                cuda=val("cuda_driver_api"),
                nvcc=val("nvcc"),
                python=val("python"),
                pycuda=val("pycuda"),
                numpy=val("numpy"),
                torch=val("torch"),
            ),
        ),
    ]

    def run_line(r: dict) -> str:
        return t["run_line"].format(
            date=r["date"],
            commit=f"`{str(r['commit'])[:10]}`",
            command=f"`{r['command']}`" if r.get("command") else DASH,
        )

    runs = ledger["runs"]
    details = ""
    if len(runs) == 1:
        lines.append((t["run"], run_line(runs[0])))
    else:
        lines.append(
            (
                t["run"],
                t["runs_line"].format(
                    n=len(runs), start=runs[0]["date"][:10], end=runs[-1]["date"][:10]
                ),
            )
        )
        each = [
            f"    - **{t['run_n'].format(i=i)}**{t['colon']}{run_line(r)}"
            + t["run_peak"].format(copy=gbps(r["copy_peak_gbps"]))
            for i, r in enumerate(runs, 1)
        ]
        details = f'\n??? note "{t["runs_all"].format(n=len(runs))}"\n\n'
        details += "\n".join(each) + "\n"
    facts = "\n".join(f"- **{k}**{t['colon']}{line}" for k, line in lines) + "\n"
    return facts + details


def _copy_kernel(ledger: dict) -> str | None:
    """The copy version whose bandwidth the ledger took as the measured peak."""
    peak = ledger["device"]["copy_peak_gbps"]
    for k in ledger["kernels"].values():
        if k["family"] == "copy" and k.get("gbps") == peak:
            return f"{k['family']}_v{k['version']}"
    return None


def render_gpu(ledger: dict, lang: str) -> str:
    """One GPU on the overview: the device, its runs, its targets."""
    ledger = L.upgrade(ledger)
    t = _texts(lang)
    parts = [f"## {ledger['device']['name']} {{ #{gpu_slug(ledger)} }}\n"]
    parts.append(_device_facts(ledger, t))
    parts.append(f"### {t['targets']}\n")
    targets = ledger.get("targets") or []
    parts.append(render.target_lines(targets, t) if targets else t["no_targets"] + "\n")
    return "\n".join(parts)


def render_index(ledgers: list[dict], lang: str, page_uri: str = INDEX) -> str:
    """The families by track and post, each linked to its figures."""
    t = _texts(lang)
    found = catalogue(_families_of(ledgers))
    homes = _homes(found)
    by_track: dict[str, list[Page]] = {}
    for page in found:
        if page.point is not None:
            by_track.setdefault(page.point.rstrip("0123456789"), []).append(page)
    out = [f"## {t['by_point']} {{ #by-point }}\n", t["by_point_lead"] + "\n"]
    for track, mine in by_track.items():
        out.append(f"### {tracks.tracks()[track][lang]}\n")
        lines = []
        for page in mine:
            families = t["join"].join(
                f"[`{f}`]({_link(homes[f].uri, page_uri)}#{f})" for f in page.shows
            )
            title = nav_title(page, lang)
            if page.home:  # else every family it shows is on another page
                title = f"[{title}]({_link(page.uri, page_uri)})"
            lines.append(f"- {title}{t['colon']}{families}")
        out.append("\n".join(lines) + "\n")
    other = [p for p in found if p.point is None]
    if other:
        families = t["join"].join(
            f"[`{f}`]({_link(other[0].uri, page_uri)}#{f})" for f in other[0].home
        )
        out.append(f"### [{t['other']}]({_link(other[0].uri, page_uri)})\n")
        out.append(t["other_list"].format(families=families) + "\n")
    return "\n".join(out)


def render_page(
    markdown: str, page_uri: str, lang: str, ledgers: list[dict] | None = None
) -> str:
    """Replace `<!-- benchmarks -->`; pages without it are returned unchanged."""
    if not DIRECTIVE.search(markdown):
        return markdown
    ledgers = load_all() if ledgers is None else ledgers
    body = "\n".join(
        [render_index(ledgers, lang, page_uri)] + [render_gpu(x, lang) for x in ledgers]
    )
    return DIRECTIVE.sub(lambda m: body, markdown)
