"""Turn the ledger into page content at build time.

A page asks for recorded results with a directive on a line of its own:

    <!-- results:device -->                        which GPU, driver, date, commit
    <!-- results:table vector_add copy -->         every version of those families
    <!-- results:output b1_vector_add -->          what snippets/b1_vector_add.py said
    <!-- results:plot b1-cpu-vs-gpu -->            a plot drawn from a recorded series
    <!-- results:targets -->                       the benchmark targets and outcomes

Every number comes from the ledger; a directive that names something the ledger
lacks fails the build.
"""

from __future__ import annotations

import html
import io
import posixpath
import re

from thousand.bench import ledger as L

DIRECTIVE = re.compile(r"^<!-- results:(\w+)((?: [\w.-]+)*) -->$", re.M)

TEXT = {
    "zh": {
        "device": "本页的输出、表格和图都来自同一次记录的 GPU 运行",
        "gpu": "GPU",
        "driver": "驱动",
        "software": "软件",
        "run": "运行",
        "output": "记录的输出（{device}，{date}）：",
        "cols": {
            "version": "版本",
            "teaches": "要点",
            "size": "规模",
            "block": "线程块",
            "time": "时间 (ms)",
            "rate": "速率",
            "pct_copy": "占复制核函数",
            "pct_peak": "占理论峰值",
            "numpy": "比 NumPy 快",
            "torch": "占 PyTorch",
            "check": "正确性检查",
        },
        "cases": "{n} 组通过",
        "cases_failed": "未通过（共 {n} 组）",
        "target": "{what}：{kernel} 达到 {ratio:.1f}%"
        "（目标 ≥ {target:.0f}%）：{verdict}",
        # Targets are recorded by their English description; their Chinese names:
        "target_names": {
            "best vector add vs the copy kernel, float32, n = 2^28": (
                "最好的向量加法与复制核函数的带宽之比（float32，n = 2<sup>28</sup>）"
            ),
            "padded shared-memory transpose vs the copy kernel, 8192 x 8192": (
                "填充后的共享内存转置与复制核函数的带宽之比（8192 × 8192）"
            ),
            "best reduction vs the copy kernel, float32, n = 2^28": (
                "最好的归约与复制核函数的带宽之比（float32，n = 2<sup>28</sup>）"
            ),
        },
        "met": "达成",
        "missed": "未达成",
        "plot_alt": "NumPy (CPU) 与 GPU 的向量加法耗时随规模的变化",
    },
    "en": {
        "device": "Every output, table and plot on this page comes from one GPU run",
        "gpu": "GPU",
        "driver": "Driver",
        "software": "Software",
        "run": "Run",
        "output": "Recorded output ({device}, {date}):",
        "cols": {
            "version": "version",
            "teaches": "what it teaches",
            "size": "size",
            "block": "block",
            "time": "time (ms)",
            "rate": "rate",
            "pct_copy": "% of copy",
            "pct_peak": "% of theoretical",
            "numpy": "× NumPy",
            "torch": "% of PyTorch",
            "check": "checked",
        },
        "cases": "{n} cases pass",
        "cases_failed": "FAILED ({n} cases)",
        "target": "{what}: {kernel} reaches {ratio:.1f}% (target ≥ {target:.0f}%): "
        "{verdict}",
        "met": "met",
        "missed": "not met",
        "plot_alt": "Vector add time over size: NumPy on the CPU against the GPU",
    },
}


def _power_of_two(n: int) -> str:
    """268435456 -> 2<sup>28</sup>; sizes a reader compares at a glance."""
    if n >= 2**16 and n & (n - 1) == 0:
        return f"2<sup>{n.bit_length() - 1}</sup>"
    return str(n)


DASH = "–"  # a figure the ledger does not have: shown as missing, never made up


def _pct(x: float) -> str:
    """Whole percent, except below 1% where 0% would hide the figure."""
    return f"{x:.0f}%" if x >= 1 else f"{x:.1g}%"


def rate(k: dict) -> str:
    """GB/s, GFLOP/s or both, whichever the entry records."""
    parts = []
    if k.get("gbps") is not None:
        parts.append(f"{k['gbps']:,.0f} GB/s")
    if k.get("gflops") is not None:
        parts.append(f"{k['gflops']:,.0f} GFLOP/s")
    return ", ".join(parts) or DASH


def _escape(text: str) -> str:
    """Plain text inside a Markdown table cell: `__device__` stays literal."""
    text = html.escape(text, quote=False)
    return re.sub(r"([\\`*_|\[\]])", r"\\\1", text)


def _check(k: dict, t: dict) -> str:
    check = k.get("check")
    if not check or check.get("cases") is None:
        return DASH
    key = "cases" if check.get("passed") else "cases_failed"
    return t[key].format(n=check["cases"])


def _pct_of_peak(k: dict, device: dict) -> str:
    peak = device.get("peak_bandwidth_gbps")
    if k.get("gbps") is None or not peak:
        return DASH
    return f"{100 * k['gbps'] / peak:.1f}%"


def _get(k: dict, key: str, fmt) -> str:
    return DASH if k.get(key) is None else fmt(k[key])


# One function per column: (ledger entry, device, language texts) -> cell.
CELLS = {
    "version": lambda k, d, t: f"`{k['family']}_v{k['version']}`",
    "teaches": lambda k, d, t: _get(
        k, "teaches", lambda s: _escape(t.get("teaches_names", {}).get(s, s))
    ),
    "version_teaches": lambda k, d, t: (
        CELLS["version"](k, d, t)
        + ("" if k.get("teaches") is None else "<br>" + CELLS["teaches"](k, d, t))
    ),
    "size": lambda k, d, t: _get(
        k, "size", lambda s: " × ".join(map(_power_of_two, s))
    ),
    "block": lambda k, d, t: _get(k, "block", lambda b: _escape(str(b))),
    "size_block": lambda k, d, t: (
        CELLS["size"](k, d, t) + "<br>" + CELLS["block"](k, d, t)
    ),
    "time": lambda k, d, t: _get(k, "median_ms", lambda x: f"{x:.3f}"),
    "rate": lambda k, d, t: rate(k),
    "pct_copy": lambda k, d, t: _get(k, "pct_of_copy", lambda x: f"{x:.1f}%"),
    "pct_peak": lambda k, d, t: _pct_of_peak(k, d),
    "numpy": lambda k, d, t: _get(k, "speedup_vs_numpy", lambda x: f"{x:,.1f}×"),
    "torch": lambda k, d, t: _get(k, "pct_of_torch", _pct),
    "check": lambda k, d, t: _check(k, t),
}
# Figures, right-aligned so that digits line up down a column.
NUMERIC = {"time", "rate", "pct_copy", "pct_peak", "numpy", "torch"}
# What a post's results:table shows; the benchmarks page shows every column.
POST_COLUMNS = [
    "version",
    "size",
    "time",
    "rate",
    "pct_copy",
    "numpy",
    "torch",
    "check",
]


def kernel_table(
    rows: list[dict], columns: list[str], t: dict, device: dict | None = None
) -> str:
    """A Markdown table, one row per ledger entry, the columns named from CELLS."""
    device = device or {}
    out = [
        "| " + " | ".join(t["cols"][c] for c in columns) + " |",
        "|" + "".join("---:|" if c in NUMERIC else "---|" for c in columns),
    ]
    for k in rows:
        cells = [CELLS[c](k, device, t) for c in columns]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def target_lines(targets: list[dict], t: dict) -> str:
    """The benchmark targets as a list: met or not, by how much."""
    lines = []
    for x in targets:
        verdict = t["met"] if x["met"] else t["missed"]
        mark = "✅" if x["met"] else "❌"
        lines.append(
            f"- {mark} "
            + t["target"].format(
                what=t.get("target_names", {}).get(x["what"], x["what"]),
                kernel=f"`{x['kernel']}`",
                ratio=100 * x["ratio"],
                target=100 * x["target"],
                verdict=verdict,
            )
        )
    return "\n".join(lines) + "\n"


class DirectiveError(ValueError):
    pass


class Results:
    """One ledger, rendered in one language."""

    def __init__(self, slug: str, lang: str):
        self.ledger = L.load(slug)
        self.t = TEXT[lang]

    # -- directives -------------------------------------------------------------

    def render_page(self, markdown: str, page_uri: str) -> str:
        def replace(m: re.Match) -> str:
            kind, args = m.group(1), m.group(2).split()
            method = getattr(self, f"_{kind}", None)
            if method is None:
                raise DirectiveError(f"{page_uri}: unknown directive results:{kind}")
            return method(args, page_uri)

        return DIRECTIVE.sub(replace, markdown)

    def _device(self, args, page_uri):
        d, run, t = self.ledger["device"], self.ledger["run"], self.t
        sm = f"sm_{d['compute_capability'].replace('.', '')}"
        lines = [
            f"- **{t['gpu']}**: {d['name']} ({sm}, {d['sm_count']} SMs, "
            f"{d['total_memory_bytes'] / 2**30:.0f} GiB)",
            f"- **{t['driver']}**: {d.get('driver_release') or '?'} "
            f"(CUDA {d['cuda_driver_api']}), nvcc {d['nvcc']}",
            f"- **{t['software']}**: Python {d['python']}, PyCUDA {d['pycuda']}, "
            f"NumPy {d['numpy']}"
            + (f", PyTorch {d['torch']}" if d.get("torch") else ""),
            f"- **{t['run']}**: {run['date']}, commit `{run['commit'][:10]}`, "
            f"`{run['command']}`",
        ]
        body = "\n".join("    " + line for line in lines)
        return f'!!! info "{t["device"]}"\n\n{body}\n'

    def _output(self, args, page_uri):
        (stem,) = args
        entry = self.ledger["snippets"].get(f"{stem}.py")
        if entry is None:
            raise DirectiveError(f"{page_uri}: snippets/{stem}.py has not run")
        text = (L.ROOT / entry["output"]).read_text().rstrip("\n")
        caption = self.t["output"].format(
            device=self.ledger["device"]["name"], date=self.ledger["run"]["date"]
        )
        return f"{caption}\n\n```text\n{text}\n```\n"

    def _table(self, families, page_uri):
        rows = [k for k in self.ledger["kernels"].values() if k["family"] in families]
        missing = set(families) - {k["family"] for k in rows}
        if missing:
            raise DirectiveError(f"{page_uri}: nothing recorded for {sorted(missing)}")
        rows.sort(key=lambda k: (families.index(k["family"]), k["version"]))
        return kernel_table(rows, POST_COLUMNS, self.t)

    def _targets(self, args, page_uri):
        return target_lines(self.ledger["targets"], self.t)

    def _plot(self, args, page_uri):
        (name,) = args
        if name not in self.ledger["series"]:
            raise DirectiveError(f"{page_uri}: no recorded series {name!r}")
        target = f"assets/plots/{name}.svg"  # drawn by the hook's on_files
        rel = posixpath.relpath(target, posixpath.dirname(page_uri) or ".")
        return f"![{self.t['plot_alt']}]({rel})\n"

    # -- plots --------------------------------------------------------------------

    def draw(self, name: str) -> bytes:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        series = self.ledger["series"][name]
        n = [p["n"] for p in series]
        fig, ax = plt.subplots(figsize=(7, 4.2), dpi=100)
        for key, label, style in [
            ("numpy_ms", "NumPy on the CPU", "o-"),
            ("with_copies_ms", "GPU incl. host↔device copies", "s-"),
            ("kernel_ms", "GPU kernel only (data already on the GPU)", "^-"),
        ]:
            ax.loglog(n, [p[key] for p in series], style, label=label, base=2)
        ax.set_xlabel("elements (float32): out = x + y")
        ax.set_ylabel("time (ms, median)")
        ax.set_title(
            f"{self.ledger['device']['name']}, {self.ledger['run']['date']}",
            fontsize=10,
        )
        ax.grid(True, which="major", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
        plt.close(fig)
        return buf.getvalue()
