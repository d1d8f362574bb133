"""The benchmarks page: every kernel version the ledgers record, one section per GPU.

docs/zh/benchmarks.md and docs/en/benchmarks.md hold an introduction and the line

    <!-- benchmarks -->

which the hook replaces at build time with, for every ledger in
docs/assets/results/*.json: the device and the run, a chart of every memory-bound
version's bandwidth against the measured and theoretical peaks, a chart of the
compute-bound versions against their baselines (when the ledger has any), a table
per kernel family, and the benchmark targets. Every figure comes from a ledger; one
an entry lacks is shown as "–".

Chart text is English in both languages: the machine that builds the site need not
have a CJK font (matplotlib would draw empty boxes), so the Chinese goes into the
caption and the alt text instead.
"""

from __future__ import annotations

import io
import json
import posixpath
import re
from pathlib import Path

from thousand.bench import ledger as L
from thousand.site import render
from thousand.site.render import DASH

DIRECTIVE = re.compile(r"^<!-- benchmarks -->$", re.M)

# Without these a GPU section cannot be drawn; the GPU run always writes them.
DEVICE_REQUIRED = (
    "name",
    "compute_capability",
    "sm_count",
    "total_memory_bytes",
    "copy_peak_gbps",
)
RUN_REQUIRED = ("date", "commit")

BANDWIDTH_COLUMNS = [
    "version_teaches",
    "size_block",
    "time",
    "rate",
    "pct_copy",
    "pct_peak",
    "numpy",
    "torch",
    "check",
]
# Percent of a bandwidth peak means nothing for a kernel limited by arithmetic.
COMPUTE_COLUMNS = [c for c in BANDWIDTH_COLUMNS if c not in ("pct_copy", "pct_peak")]

TEXT = {
    "zh": {
        "recorded": "共记录了 {n} 块 GPU：{gpus}。",
        # Shorter headers than a post's tables: this page has more columns.
        "cols": {
            "version_teaches": "版本与要点",
            "size_block": "规模 / 线程块",
            "time": "时间 (ms)",
            "rate": "速率",
            "pct_copy": "占复制",
            "pct_peak": "占理论峰值",
            "numpy": "比 NumPy 快",
            "torch": "占 PyTorch",
            "check": "正确性检查",
        },
        "gpu_run": "{name}（{date}）",
        "join": "、",
        "colon": "：",
        "gpu": "设备",
        "gpu_line": "{name}，计算能力 {cc}（{sm}），{sms} 个 SM，显存 {mem}，L2 {l2}",
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
        "run_peak": "；这次运行中复制核函数 {copy}",
        "memory_bound": "访存受限的核函数",
        "compute_bound": "计算受限的核函数",
        "runs_span": "条形来自运行 1–{n}（{start} 至 {end}），各取自测出它的那次运行；"
        "虚线是最后一次运行里复制核函数的带宽，各次运行中复制核函数在 {lo}–{hi} GB/s "
        "之间",
        "targets": "基准目标",
        "no_targets": "这次运行没有记录基准目标。",
        "bandwidth_alt": "{name} 上各访存受限核函数版本的实测带宽",
        "bandwidth_caption": "{name} 上每个访存受限核函数版本的实测带宽（GB/s，"
        "越长越好）。虚线是复制核函数测出的带宽，即实测峰值；点线是按"
        "显存时钟和位宽算出的理论峰值；每组旁边的黑色短竖线是 PyTorch 做同一运算的"
        "带宽。{date}。",
        "compute_alt": "{name} 上计算受限核函数与 PyTorch、NumPy 的 GFLOP/s 对比",
        "compute_caption": "{name} 上计算受限的核函数（GFLOP/s，越长越好），"
        "灰色是同一运算的基线：PyTorch 在同一块 GPU 上（矩阵乘法走 cuBLAS，关闭 "
        "TF32），NumPy 在 CPU 上。{date}。",
    },
    "en": {
        "recorded": "Recorded runs: {gpus}.",
        "cols": {
            "version_teaches": "version: what it teaches",
            "size_block": "size / block",
            "time": "time (ms)",
            "rate": "rate",
            "pct_copy": "% of copy",
            "pct_peak": "% of theoretical",
            "numpy": "× NumPy",
            "torch": "% of PyTorch",
            "check": "checked",
        },
        "gpu_run": "{name} ({date})",
        "join": ", ",
        "colon": ": ",
        "gpu": "Device",
        "gpu_line": "{name}, compute capability {cc} ({sm}), {sms} SMs, {mem} of "
        "memory, {l2} of L2",
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
        "run_peak": "; the copy kernel ran at {copy} in this run",
        "memory_bound": "Memory-bound kernels",
        "compute_bound": "Compute-bound kernels",
        "runs_span": "Bars from runs 1–{n} ({start} to {end}), each from the run "
        "that measured it; the dashed line is the last run's copy kernel, which ran "
        "at {lo}–{hi} GB/s across the runs",
        "targets": "Targets",
        "no_targets": "This run recorded no benchmark targets.",
        "bandwidth_alt": "Measured bandwidth of each memory-bound kernel version on "
        "{name}",
        "bandwidth_caption": "Bandwidth of every memory-bound kernel version on "
        "{name} (GB/s, longer is better). Dashed: the copy kernel, the measured "
        "peak. Dotted: the theoretical peak from memory clock and bus "
        "width. Short black bars: PyTorch doing the same operation. {date}.",
        "compute_alt": "GFLOP/s of the compute-bound kernels on {name} against "
        "PyTorch and NumPy",
        "compute_caption": "Compute-bound kernels on {name} (GFLOP/s, longer is "
        "better); in grey, the same operation in PyTorch on the same GPU (cuBLAS for "
        "matmul, TF32 off) and in NumPy on the CPU. {date}.",
    },
}


class LedgerError(ValueError):
    """A ledger this page cannot render, with the file and what is missing."""


def _require(mapping, fields, where: str, source: str) -> None:
    if not isinstance(mapping, dict):
        raise LedgerError(f"{source}: no {where!r} section")
    for field in fields:
        if mapping.get(field) is None:
            raise LedgerError(
                f"{source}: {where} has no {field!r} (the GPU run writes it: "
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
    """Every ledger in docs/assets/results (or `paths`), checked."""
    paths = L.ledger_files() if paths is None else paths
    if not paths:
        raise LedgerError(
            f"no ledger in {L.RESULTS_DIR}: run `python -m thousand.bench` on a GPU"
        )
    ledgers = []
    for p in paths:
        try:
            ledgers.append(validate(L.load(p), Path(p).name))
        except json.JSONDecodeError as e:
            raise LedgerError(f"{Path(p).name}: not valid JSON ({e})") from e
    return ledgers


def gpu_slug(ledger: dict) -> str:
    d = ledger["device"]
    return d.get("slug") or L.slug(d["name"])


# -- grouping ---------------------------------------------------------------------


def _families(ledger: dict) -> dict[str, list[dict]]:
    """Family -> its entries by version; copy first (it is the ruler), then A-Z."""
    out: dict[str, list[dict]] = {}
    for k in ledger["kernels"].values():
        out.setdefault(k["family"], []).append(k)
    order = sorted(out, key=lambda f: (f != "copy", f))
    return {f: sorted(out[f], key=lambda k: k["version"]) for f in order}


def _compute_bound(entries: list[dict]) -> bool:
    """FLOP rates and no byte rates: GB/s and % of a bandwidth peak do not apply."""
    return any(k.get("gflops") is not None for k in entries) and all(
        k.get("gbps") is None for k in entries
    )


def _groups(ledger: dict) -> list[tuple[str, list[str], dict[str, list[dict]]]]:
    fams = _families(ledger)
    memory = {f: e for f, e in fams.items() if not _compute_bound(e)}
    compute = {f: e for f, e in fams.items() if _compute_bound(e)}
    groups = []
    if memory:
        groups.append(("memory_bound", BANDWIDTH_COLUMNS, memory))
    if compute:
        groups.append(("compute_bound", COMPUTE_COLUMNS, compute))
    return groups


def _copy_kernel(ledger: dict) -> str | None:
    """The copy version whose bandwidth the ledger took as the measured peak."""
    peak = ledger["device"]["copy_peak_gbps"]
    for k in ledger["kernels"].values():
        if k["family"] == "copy" and k.get("gbps") == peak:
            return f"{k['family']}_v{k['version']}"
    return None


# -- charts -----------------------------------------------------------------------


def _baseline_rate(k: dict, work: str, ms: str) -> float | None:
    """The baseline's rate for the same work: recorded bytes or FLOPs over its time.
    A family's versions share one size and one baseline run, so any entry will do."""
    if k.get(work) and k.get(ms):
        return k[work] / k[ms] / 1e6
    return None


def _svg(fig) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _runs(ledger: dict) -> list[dict]:
    """The ledger's runs (schema 2), or its one run (schema 1)."""
    return ledger.get("runs") or [ledger["run"]]


def _title(ledger: dict) -> str:
    runs = _runs(ledger)
    if len(runs) == 1:
        return f"{ledger['device']['name']} · {ledger['run']['date']}"
    span = f"{runs[0]['date'][:10]} to {runs[-1]['date'][:10]}"
    return f"{ledger['device']['name']} · runs 1–{len(runs)}, {span}"


def _when(ledger: dict, t: dict) -> str:
    """A chart's runs for its caption: the date, or the span of several runs and
    how far their copy kernels (the dashed line is the last one's) lie apart."""
    runs = _runs(ledger)
    if len(runs) == 1:
        return ledger["run"]["date"]
    peaks = [r["copy_peak_gbps"] for r in runs]
    return t["runs_span"].format(
        n=len(runs),
        start=runs[0]["date"][:10],
        end=runs[-1]["date"][:10],
        lo=f"{min(peaks):,.0f}",
        hi=f"{max(peaks):,.0f}",
    )


def _bars(ax, rows: list[tuple[str, float, object]], xmax: float) -> list[float]:
    """Horizontal bars top to bottom, a gap where the label is None; their y."""
    ys, labels, y = [], [], 0.0
    for label, value, color in rows:
        if label is None:
            y += 0.5
            continue
        ax.barh(y, value, height=0.7, color=color)
        # The figure inside a long bar, clear of the peak lines; after a short one.
        inside = value > 0.2 * xmax
        ax.text(
            value,
            y,
            f"{value:,.0f} " if inside else f" {value:,.0f}",
            va="center",
            ha="right" if inside else "left",
            fontsize=8,
            color="white" if inside else "black",
        )
        ys.append(y)
        labels.append(label)
        y += 1
    ax.set_yticks(ys, labels, fontsize=8, family="monospace")
    ax.set_ylim(y - 0.4, -0.6)  # first row on top
    ax.set_xlim(0, xmax)
    ax.xaxis.set_major_formatter("{x:,.0f}")
    ax.grid(True, axis="x", alpha=0.3)
    return ys


def _figure_for(rows: int, gaps: int):
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(8, 0.9 + 0.28 * rows + 0.14 * gaps), dpi=100)


def draw_bandwidth(ledger: dict) -> bytes:
    """Horizontal bars: GB/s of every version that records it, grouped by family,
    with the measured (copy) and theoretical peaks and PyTorch's rate per family."""
    import matplotlib.pyplot as plt

    d = ledger["device"]
    colors = plt.get_cmap("tab10").colors
    fams = {
        f: [k for k in e if k.get("gbps") is not None]
        for f, e in _families(ledger).items()
    }
    fams = {f: e for f, e in fams.items() if e}
    torch = {f: _baseline_rate(e[0], "bytes", "torch_ms") for f, e in fams.items()}
    xmax = 1.08 * max(
        [d["copy_peak_gbps"], d.get("peak_bandwidth_gbps") or 0]
        + [k["gbps"] for e in fams.values() for k in e]
        + [r for r in torch.values() if r is not None]
    )
    rows = []
    for i, (family, entries) in enumerate(fams.items()):
        if rows:
            rows.append((None, 0, None))
        color = colors[i % len(colors)]
        rows += [(f"{family}_v{k['version']}", k["gbps"], color) for k in entries]
    fig, ax = _figure_for(sum(map(len, fams.values())), len(fams) - 1)
    ys = iter(_bars(ax, rows, xmax))
    label = "PyTorch, same operation"
    for family, entries in fams.items():
        span = [next(ys) for _ in entries]
        if torch[family] is not None:
            x = torch[family]
            ax.plot(
                [x, x], [span[0] - 0.45, span[-1] + 0.45], "k-", lw=2.5, label=label
            )
            label = "_nolegend_"
    copy = _copy_kernel(ledger) or "copy kernel"
    ax.axvline(
        d["copy_peak_gbps"],
        color="#333333",
        linestyle="--",
        linewidth=1,
        label=f"measured peak ({copy}): {d['copy_peak_gbps']:,.0f} GB/s",
    )
    if d.get("peak_bandwidth_gbps"):
        ax.axvline(
            d["peak_bandwidth_gbps"],
            color="#333333",
            linestyle=":",
            linewidth=1.2,
            label=f"theoretical (memory clock × bus): "
            f"{d['peak_bandwidth_gbps']:,.0f} GB/s",
        )
    ax.set_xlabel("GB/s: bytes the operation must move / median time")
    ax.set_title(_title(ledger), fontsize=10)
    ax.legend(
        loc="upper center",
        # Just below the x label: 0.4 inch, in axes units (matplotlib's default
        # axes take 77% of the figure's height).
        bbox_to_anchor=(0.5, -0.4 / (0.77 * fig.get_figheight())),
        ncol=2,
        fontsize=8,
        frameon=False,
    )
    return _svg(fig)


def draw_compute(ledger: dict) -> bytes:
    """Bars: GFLOP/s of the compute-bound versions and of their baselines."""
    import matplotlib.pyplot as plt

    colors = plt.get_cmap("tab10").colors
    rows = []  # (label, GFLOP/s, colour); a None label is a gap
    fams = [(f, e) for f, e in _families(ledger).items() if _compute_bound(e)]
    for i, (family, entries) in enumerate(fams):
        if rows:
            rows.append((None, 0, None))
        for k in entries:
            if k.get("gflops") is not None:
                color = colors[i % len(colors)]
                rows.append((f"{family}_v{k['version']}", k["gflops"], color))
        for name, ms, color in [
            ("PyTorch", "torch_ms", "#8c8c8c"),
            ("NumPy (CPU)", "numpy_ms", "#c8c8c8"),
        ]:
            rate = _baseline_rate(entries[0], "flops", ms)
            if rate is not None:
                rows.append((f"{name}: {family}", rate, color))
    bars = [r for r in rows if r[0] is not None]
    fig, ax = _figure_for(len(bars), len(rows) - len(bars))
    _bars(ax, rows, 1.08 * max(r[1] for r in bars))
    ax.set_xlabel("GFLOP/s: floating-point operations / median time")
    ax.set_title(_title(ledger), fontsize=10)
    return _svg(fig)


def charts(ledger: dict) -> dict[str, object]:
    """Which charts this ledger has data for: kind -> drawing function."""
    out = {}
    if any(k.get("gbps") is not None for k in ledger["kernels"].values()):
        out["bandwidth"] = draw_bandwidth
    if any(_compute_bound(e) for e in _families(ledger).values()):
        out["compute"] = draw_compute
    return out


def chart_uri(ledger: dict, kind: str) -> str:
    return f"assets/benchmarks/{gpu_slug(ledger)}-{kind}.svg"


def svgs(ledgers: list[dict] | None = None) -> dict[str, bytes]:
    """Every chart of every ledger, by its path in the site (for the hook)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ledgers = load_all() if ledgers is None else ledgers
    out = {}
    # A fixed salt: the SVG's generated ids, so the bytes, are the same every build.
    with plt.rc_context({"svg.hashsalt": "thousand-points"}):
        for ledger in ledgers:
            for kind, draw in charts(ledger).items():
                out[chart_uri(ledger, kind)] = draw(ledger)
    return out


# -- the page ---------------------------------------------------------------------


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
            "gpu",
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
            "bandwidth",
            t["bandwidth_line"].format(
                copy=gbps(d["copy_peak_gbps"]),
                kernel=f"`{kernel}`" if kernel else DASH,
                peak=val("peak_bandwidth_gbps", gbps),
                formula=formula,
                ratio=ratio,
            ),
        ),
        (
            "software",
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
    runs = ledger["runs"]
    for i, r in enumerate(runs, 1):
        line = t["run_line"].format(
            date=r["date"],
            commit=f"`{str(r['commit'])[:10]}`",
            command=f"`{r['command']}`" if r.get("command") else DASH,
        )
        if len(runs) > 1:  # the copy kernel's bandwidth in that run: its ruler
            line += t["run_peak"].format(copy=gbps(r["copy_peak_gbps"]))
        lines.append(("run", line) if len(runs) == 1 else (f"run {i}", line))

    def label(key: str) -> str:
        if key.startswith("run "):
            return t["run_n"].format(i=key.split()[1])
        return t[key]

    return "\n".join(f"- **{label(k)}**{t['colon']}{line}" for k, line in lines) + "\n"


def _figure(ledger: dict, kind: str, t: dict, page_uri: str) -> str:
    rel = posixpath.relpath(chart_uri(ledger, kind), posixpath.dirname(page_uri) or ".")
    names = {"name": ledger["device"]["name"], "date": _when(ledger, t)}
    alt = t[f"{kind}_alt"].format(**names)
    caption = t[f"{kind}_caption"].format(**names)
    return (
        f'<figure markdown="span">\n  ![{alt}]({rel})\n'
        f"  <figcaption>{caption}</figcaption>\n</figure>\n"
    )


def render_gpu(ledger: dict, lang: str, page_uri: str) -> str:
    """One GPU's section: facts, charts, a table per family, targets."""
    ledger = L.upgrade(ledger)  # a schema-1 ledger is one run
    t = {**render.TEXT[lang], **TEXT[lang]}
    chart_kinds = charts(ledger)
    heading = f"## {ledger['device']['name']} {{ #{gpu_slug(ledger)} }}\n"
    parts = [heading, _device_facts(ledger, t)]
    for group, columns, fams in _groups(ledger):
        parts.append(f"### {t[group]}\n")
        kind = "bandwidth" if group == "memory_bound" else "compute"
        if kind in chart_kinds:
            parts.append(_figure(ledger, kind, t, page_uri))
        for family, entries in fams.items():
            parts.append(f"#### `{family}`\n")
            parts.append(render.kernel_table(entries, columns, t, ledger["device"]))
            parts.append(render.measured_in(ledger, entries, t))
    parts.append(f"### {t['targets']}\n")
    targets = ledger.get("targets") or []
    parts.append(render.target_lines(targets, t) if targets else t["no_targets"] + "\n")
    return "\n".join(parts)


def render_all(ledgers: list[dict], lang: str, page_uri: str) -> str:
    t = TEXT[lang]
    gpus = t["join"].join(
        t["gpu_run"].format(
            name=f"[{x['device']['name']}](#{gpu_slug(x)})", date=x["run"]["date"]
        )
        for x in ledgers
    )
    # With several GPUs, a line that links to each; with one, its heading follows.
    head = (
        [t["recorded"].format(n=len(ledgers), gpus=gpus) + "\n"]
        if len(ledgers) > 1
        else []
    )
    return "\n".join([*head, *(render_gpu(x, lang, page_uri) for x in ledgers)])


def render_page(
    markdown: str, page_uri: str, lang: str, ledgers: list[dict] | None = None
) -> str:
    """Replace `<!-- benchmarks -->`; pages without it are returned unchanged."""
    if not DIRECTIVE.search(markdown):
        return markdown
    ledgers = load_all() if ledgers is None else ledgers
    body = render_all(ledgers, lang, page_uri)
    return DIRECTIVE.sub(lambda m: body, markdown)
