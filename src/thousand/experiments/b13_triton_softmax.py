"""B13: row softmax in Triton beside this package's CUDA C softmax (v4, B12, its
block sized to the row) and torch.softmax, over 4,096 rows of 256 to 16,384
float32 logits (a few units wide, as a model's are). Each way reads the same
matrix and writes its own output; GB/s counts one read and one write of the
matrix over the CUDA-event median, L2 flushed between repeats.
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import median, on_cpu, time_ms, to_device
from thousand.experiments import Experiment, Note

ROWS = 4096
COLS = [256, 512, 1024, 2048, 4096, 8192, 16384]
QUICK = dict(rows=8, cols=[16, 40])
TRITON, OURS, TORCH = "Triton", "CUDA C v4", "torch.softmax"
WAYS = [TRITON, OURS, TORCH]


def calls(host: np.ndarray) -> dict:
    """way -> a no-argument call: each its own copy of the matrix and output."""
    import torch

    from thousand.beyond.triton_softmax import softmax as triton_softmax
    from thousand.kernels.softmax import softmax

    x = torch.from_numpy(host).to("cpu" if on_cpu() else "cuda")
    y = torch.empty_like(x)
    dx, dy = to_device(host), to_device(host * 0)
    return {
        TRITON: lambda: triton_softmax(x, out=y),
        OURS: lambda: softmax(dx, out=dy, version=4),
        TORCH: lambda: torch.softmax(x, dim=1, out=y),
    }


def run(quick: bool) -> dict:
    rows, cols_list = (QUICK["rows"], QUICK["cols"]) if quick else (ROWS, COLS)
    warmup, repeat = (1, 2) if quick else (3, 20)
    series = {w: [] for w in WAYS}
    for cols in cols_list:
        rng = np.random.default_rng(cols)
        host = (rng.standard_normal((rows, cols)) * 3).astype(np.float32)
        found = calls(host)
        for w in WAYS:
            ms = median(time_ms(found[w], warmup=warmup, repeat=repeat))
            series[w].append(2 * rows * cols * 4 / (ms * 1e-3) / 1e9)

    def ratio(a, b, cols):
        i = cols_list.index(cols)
        return series[a][i] / series[b][i]

    mid, last = cols_list[len(cols_list) // 2], cols_list[-1]
    return {
        "kind": "lines",
        "x": {"label": "columns per row", "values": cols_list, "log": True},
        "y": {"label": "GB/s", "format": "{:,.0f}"},
        "series": series,
        "notes": {
            "triton_vs_ours_mid": ratio(TRITON, OURS, mid),
            "triton_vs_torch_mid": ratio(TRITON, TORCH, mid),
            "triton_vs_ours_last": ratio(TRITON, OURS, last),
            "triton_vs_torch_last": ratio(TRITON, TORCH, last),
            "best_gbs": max(max(v) for v in series.values()),
            "mid_cols": mid,
        },
    }


EXPERIMENT = Experiment(
    name="b13-triton-softmax",
    title={
        "zh": "行 softmax 的带宽：Triton、本包的 CUDA C（v4）与 torch.softmax"
        "（4,096 行，float32）",
        "en": "Row softmax bandwidth: Triton, this package's CUDA C (v4) and "
        "torch.softmax (4,096 rows, float32)",
    },
    run=run,
    families=("softmax",),
    files=("beyond/triton_softmax.py", "beyond/__init__.py"),
    notes={
        "triton_vs_ours_mid": Note(
            "列数居中时 Triton 与 CUDA C v4 的速度比",
            "Triton's speed over CUDA C v4's at the middle row length",
            "{:.2f}×",
        ),
        "triton_vs_torch_mid": Note(
            "列数居中时 Triton 与 torch.softmax 的速度比",
            "Triton's speed over torch.softmax's at the middle row length",
            "{:.2f}×",
        ),
        "triton_vs_ours_last": Note(
            "最长的行上 Triton 与 CUDA C v4 的速度比",
            "Triton's speed over CUDA C v4's at the longest rows",
            "{:.2f}×",
        ),
        "triton_vs_torch_last": Note(
            "最长的行上 Triton 与 torch.softmax 的速度比",
            "Triton's speed over torch.softmax's at the longest rows",
            "{:.2f}×",
        ),
        "best_gbs": Note(
            "三者中最高的带宽（GB/s）",
            "The highest bandwidth of the three (GB/s)",
            "{:,.0f}",
        ),
        "mid_cols": Note(
            "居中的行长（列数）", "The middle row length (columns)", "{:,.0f}"
        ),
    },  # fmt: skip
    zh={
        "columns per row": "每行列数",
        "GB/s": "GB/s",
        TRITON: "Triton",
        OURS: "CUDA C v4",
        TORCH: "torch.softmax",
    },
)
