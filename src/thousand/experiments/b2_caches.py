"""B2: what the L2 cache does for a memory-bound kernel. axpy v2's bandwidth over n,
with L2 left warm (the same three arrays again and again) and flushed before every
launch (a buffer twice the size of L2 written in between).

Where the working set, 12 n bytes, fits in L2, the warm repeats read from L2 and
beat DRAM bandwidth; past it, both series fall to DRAM's. Small kernels last a few
microseconds, less than our Python launcher takes to issue one: time_ms keeps the
GPU busy while the host issues each launch (see thousand.cuda.timing), so the events
time the kernel, not the host. On the CPU backend the figures are emulation times
and mean nothing.
"""

from __future__ import annotations

from thousand.cuda import (
    device_info,
    empty,
    fill,
    median,
    time_ms,
)
from thousand.experiments import Experiment, Note
from thousand.kernels.axpy import axpy_v2

A = 0.5
WARM = "L2 warm (same arrays again)"
FLUSHED = "L2 flushed before each launch"


def run(quick: bool) -> dict:
    sizes = [2**k for k in range(10, 15 if quick else 29)]
    repeat = 3 if quick else 20
    series = {WARM: [], FLUSHED: []}
    for n in sizes:
        dx, dy, d_out = empty(n), empty(n), empty(n)
        fill(dx, 1.0)
        fill(dy, 2.0)

        def launch(dx=dx, dy=dy, d_out=d_out):
            axpy_v2(A, dx, dy, out=d_out)

        for name, flush in ((WARM, False), (FLUSHED, True)):
            ms = median(time_ms(launch, repeat=repeat, flush_l2=flush))
            series[name].append(12 * n / ms / 1e6)  # bytes / ms / 1e6 = GB/s
    l2 = device_info()["l2_cache_bytes"]
    warm_peak = max(series[WARM])
    gains = [w / f for w, f in zip(series[WARM], series[FLUSHED], strict=True)]
    best = max(range(len(sizes)), key=gains.__getitem__)
    return {
        "kind": "lines",
        "x": {"label": "n (float32 elements)", "values": sizes, "log": True},
        "y": {"label": "GB/s", "log": False, "format": "{:,.0f}"},
        "series": series,
        "notes": {
            "l2_mib": l2 / 2**20,
            "fits_n": float(l2 // 12),
            "warm_peak": warm_peak,
            "flushed_last": series[FLUSHED][-1],
            "gain": gains[best],
            "gain_n": float(sizes[best]),
        },
    }


EXPERIMENT = Experiment(
    name="b2-caches",
    title={
        "zh": "axpy v2 的带宽随 n 的变化：L2 保持热，还是每次清空",
        "en": "axpy v2 bandwidth over n, L2 warm or flushed",
    },
    run=run,
    families=("axpy",),
    notes={
        "l2_mib": Note(
            "L2 缓存大小（从设备读出，MiB）",
            "L2 cache (read from the device, MiB)",
            "{:,.0f}",
        ),
        "fits_n": Note(
            "工作集 12n 字节还放得进 L2 的最大 n",
            "largest n whose 12 n bytes fit in L2",
            "{:,.0f}",
        ),
        "warm_peak": Note(
            "L2 热时的最高带宽 (GB/s)", "peak warm bandwidth (GB/s)", "{:,.0f}"
        ),
        "flushed_last": Note(
            "最大 n 处、L2 清空时的带宽 (GB/s)",
            "flushed bandwidth at the largest n (GB/s)",
            "{:,.0f}",
        ),
        "gain": Note(
            "L2 热比 L2 清空快得最多的倍数",
            "largest gain of warm over flushed, at one n",
            "{:,.2f}×",
        ),
        "gain_n": Note("这个倍数出现在 n =", "the n where that gain occurs", "{:,.0f}"),
    },
    zh={
        "n (float32 elements)": "n（float32 元素个数）",
        "GB/s": "GB/s",
        WARM: "L2 保持热（反复用同一组数组）",
        FLUSHED: "每次启动前清空 L2",
    },
)
