"""B8: bandwidth of the column sums over K, the rows each thread adds, for the loop
left alone (v1), unrolled by hand by 4 (v3) and fully unrolled by a template (v4).

Every point moves the same bytes: a (K, n) matrix with K * n = 2^28 floats (1 GiB),
far beyond L2, and n outputs. v1 has one load in flight per thread whatever K is;
v3 has up to four, v4 up to K (as many as its registers hold). Each timed call
issues BATCH launches, so the Python in front of one launch overlaps the kernel
before it. The copy kernel's rate over the same 2²⁸ floats is the ceiling.
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import empty, fill, median, time_ms
from thousand.experiments import Experiment, Note
from thousand.kernels.copy import copy_v2
from thousand.kernels.unroll import (
    reorder_bound,
    unroll_ref,
    unroll_v1,
    unroll_v3,
    unroll_v4,
)

ROWS = [1, 2, 4, 8, 16, 32]  # every K has its own instance in v4
SERIES = {
    "v1: a loop, one load in flight": unroll_v1,
    "v3: unrolled by 4 by hand": unroll_v3,
    "v4: template, fully unrolled": unroll_v4,
}
BLOCK = 256


def check(n: int) -> None:
    """Each version at each K against the reference, before anything is timed."""
    rng = np.random.default_rng(8)
    for k in ROWS + [7]:  # 7: v3's remainder loop and v4's fallback loop
        x = rng.random((k, n), dtype=np.float32)
        ref = unroll_ref(x)
        for name, fn in SERIES.items():
            err = np.abs(fn(x) - ref).max() / max(ref.max(), 1.0)
            bound = reorder_bound(k) if fn is unroll_v3 else 0.0
            if err > bound:
                raise AssertionError(f"{name}, K = {k}: error {err:.3g} > {bound:.3g}")


def _rate(fn, inputs, out, nbytes, batch, repeat) -> float:
    def launches():
        for _ in range(batch):
            fn(*inputs, out=out, block=BLOCK)

    ms = median(time_ms(launches, warmup=2, repeat=repeat)) / batch
    return nbytes / ms / 1e6  # GB/s


def run(quick: bool) -> dict:
    total, batch, repeat = (2**14, 1, 2) if quick else (2**28, 3, 20)
    check(1000 if quick else 10_007)
    series = {name: [] for name in SERIES}
    for k in ROWS:
        n = total // k
        dx, d_out = empty((k, n)), empty((n,))
        fill(dx, 0.5)  # the values do not change the time; check() tested them
        for name, fn in SERIES.items():
            nbytes = 4 * (k + 1) * n  # read x, write out
            series[name].append(_rate(fn, (dx,), d_out, nbytes, batch, repeat))
        del dx, d_out
    src, dst = empty((total,)), empty((total,))
    fill(src, 0.5)
    copy = _rate(copy_v2, (src,), dst, 8 * total, batch, repeat)
    at16 = ROWS.index(16)
    v1, v3, v4 = series.values()
    return {
        "kind": "lines",
        "x": {"label": "rows per column K", "values": ROWS, "log": True},
        "y": {"label": "GB/s", "format": "{:,.0f}"},
        "series": series,
        "notes": {
            "v1_at_16": v1[at16],
            "v3_at_16": v3[at16],
            "v4_at_16": v4[at16],
            "v4_over_v1_at_16": v4[at16] / v1[at16],
            "v1_spread": max(v1[ROWS.index(4) :]) / min(v1[ROWS.index(4) :]),
            "copy": copy,
            "v4_best_pct_copy": 100 * max(v4) / copy,
        },
    }


EXPERIMENT = Experiment(
    name="b8-unroll",
    title={
        "zh": "列求和的带宽随每列行数 K 的变化：不展开、手工展开 4 次、模板完全展开",
        "en": "Column sums: bandwidth over K, for a loop, by-4 and full unrolling",
    },
    run=run,
    families=("unroll", "copy"),
    notes={
        "v1_at_16": Note("K = 16 时 v1 的带宽", "v1 at K = 16", "{:,.0f} GB/s"),
        "v3_at_16": Note("K = 16 时 v3 的带宽", "v3 at K = 16", "{:,.0f} GB/s"),
        "v4_at_16": Note("K = 16 时 v4 的带宽", "v4 at K = 16", "{:,.0f} GB/s"),
        "v4_over_v1_at_16": Note(
            "K = 16 时 v4 比 v1 快", "v4 over v1 at K = 16", "{:.2f}×"
        ),
        "v1_spread": Note(
            "K 从 4 到 32，v1 最快与最慢之比",
            "v1 from K = 4 to 32: its fastest over its slowest",
            "{:.2f}×",
        ),
        "copy": Note(
            "复制核函数的带宽（同样 2²⁸ 个 float，读一遍写一遍）",
            "the copy kernel over the same 2²⁸ floats (read and written)",
            "{:,.0f} GB/s",
        ),
        "v4_best_pct_copy": Note(
            "v4 最好的一点占复制核函数带宽的比例",
            "v4's best point, as a share of the copy kernel's rate",
            "{:.1f}%",
        ),
    },
    zh={
        "rows per column K": "每列的行数 K",
        "GB/s": "带宽 (GB/s)",
        "v1: a loop, one load in flight": "v1：循环，每次一个加载在途",
        "v3: unrolled by 4 by hand": "v3：手工展开 4 次",
        "v4: template, fully unrolled": "v4：模板，完全展开",
    },
)
