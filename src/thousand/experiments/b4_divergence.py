"""B4: what divergence costs. The same work per element, the branch decided per
thread (divergence_v1: a warp's lanes take P different paths) or per warp
(divergence_v2: all lanes of a warp take the same path), for P = 1, 2, 4, ..., 32
paths. With one path the two kernels run the same instructions; from there on each
of v1's warps runs its P paths one after another.
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import empty, median, time_ms, to_device
from thousand.experiments import Experiment, Note
from thousand.kernels.divergence import MAX_PATHS, divergence

PER_THREAD = "branch per thread (v1)"
PER_WARP = "branch per warp (v2)"
PATHS = [2**k for k in range(6)]  # 1 ... 32 paths in a warp


def run(quick: bool) -> dict:
    n = 2**12 if quick else 2**26  # full: long enough that launch overhead is noise
    x = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    dx, d_out = to_device(x), empty(n)
    series = {PER_THREAD: [], PER_WARP: []}
    for paths in PATHS:
        for name, version in ((PER_THREAD, 1), (PER_WARP, 2)):

            def once(version=version, paths=paths):
                divergence(dx, out=d_out, version=version, paths=paths)

            samples = time_ms(once, warmup=1 if quick else 3, repeat=2 if quick else 15)
            series[name].append(median(samples))
    last = PATHS.index(MAX_PATHS)
    return {
        "kind": "lines",
        "x": {"label": "paths in a warp P", "values": PATHS, "log": True},
        "y": {"label": "time (ms)", "log": True, "format": "{:,.3f}"},
        "series": series,
        "notes": {
            "n": float(n),
            "slowdown": series[PER_THREAD][last] / series[PER_WARP][last],
            "growth": series[PER_THREAD][last] / series[PER_THREAD][0],
            "warp_growth": series[PER_WARP][last] / series[PER_WARP][0],
        },
    }


EXPERIMENT = Experiment(
    name="b4-divergence",
    title={
        "zh": "同样的工作量，分支按线程还是按线程束决定：时间随路径数 P 的变化",
        "en": "The same work, the branch decided per thread or per warp, over P paths",
    },
    run=run,
    families=("divergence",),
    notes={
        "n": Note("元素个数 n", "elements n", "{:,.0f}"),
        "slowdown": Note(
            "P = 32 时，按线程分支比按线程束分支慢多少倍",
            "at P = 32, branch per thread over branch per warp",
            "{:,.1f}×",
        ),
        "growth": Note(
            "按线程分支：P = 32 的时间是 P = 1 的多少倍",
            "branch per thread: time at P = 32 over time at P = 1",
            "{:,.1f}×",
        ),
        "warp_growth": Note(
            "按线程束分支：P = 32 的时间是 P = 1 的多少倍",
            "branch per warp: time at P = 32 over time at P = 1",
            "{:,.2f}×",
        ),
    },
    zh={
        "paths in a warp P": "一个线程束里的路径数 P",
        "time (ms)": "时间 (ms)",
        PER_THREAD: "按线程分支 (v1)",
        PER_WARP: "按线程束分支 (v2)",
    },
)
