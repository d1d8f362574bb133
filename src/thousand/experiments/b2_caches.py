"""B2: what the L2 cache does for a memory-bound kernel. axpy v2's bandwidth over n,
with L2 left warm (the same three arrays again and again) and flushed before every
launch (a buffer twice the size of L2 written in between).

Where the working set, 12 n bytes, fits in L2, the warm repeats read from L2 and
beat DRAM bandwidth; past it, both series fall to DRAM's. Small kernels last a few
microseconds, less than our Python launcher takes to issue one, so on the GPU the
launches are queued behind a few milliseconds of other work (axpy on a large array)
before the first is reached: the CUDA events around each then time the kernel, not
the host. On the CPU backend the figures are emulation times and mean nothing.
"""

from __future__ import annotations

from thousand.cuda import (
    device_info,
    driver,
    empty,
    fill,
    median,
    on_cpu,
    time_ms,
)
from thousand.cuda.timing import L2Flusher
from thousand.experiments import Experiment, Note
from thousand.kernels.axpy import axpy_v2

A = 0.5
WARM = "L2 warm (same arrays again)"
FLUSHED = "L2 flushed before each launch"
BLOCKER_N = 2**26  # 768 MiB of axpy: a fraction of a millisecond per launch


class QueuedTimer:
    """Event times of launches that the device reaches only after the host has
    issued all of them, so no launch waits on Python."""

    def __init__(self):
        self.drv = driver()
        bx, by, bo = (empty(BLOCKER_N) for _ in range(3))
        for d in (bx, by):
            fill(d, 1.0)
        self.block = lambda: axpy_v2(A, bx, by, out=bo)
        self.l2 = L2Flusher()

    def flush(self):
        self.drv.memset_d32_async(self.l2.buf, 0, self.l2.nbytes // 4)

    def __call__(self, launch, flush: bool, repeat: int) -> float:
        drv = self.drv
        for blockers in (8, 32, 128):
            marks = [(drv.Event(), drv.Event()) for _ in range(repeat)]
            busy = drv.Event()
            for _ in range(blockers):
                self.block()
            busy.record()
            launch()  # a warm-up: loads the arrays into L2 for the warm series
            for start, stop in marks:
                if flush:
                    self.flush()
                start.record()
                launch()
                stop.record()
            ran_dry = busy.query()  # the device caught up with the host: retry
            marks[-1][1].synchronize()
            if not ran_dry:
                return median([stop.time_since(start) for start, stop in marks])
        raise RuntimeError(
            "b2-caches: the device finished 128 queued blocker launches before the "
            "host had issued the timed ones; the host is too slow to time this way"
        )


def _cpu_ms(launch, flush: bool, repeat: int) -> float:
    return median(time_ms(launch, warmup=1, repeat=repeat, flush_l2=flush))


def run(quick: bool) -> dict:
    sizes = [2**k for k in range(10, 15 if quick else 29)]
    repeat = 3 if quick else 20
    timer = _cpu_ms if on_cpu() else QueuedTimer()
    series = {WARM: [], FLUSHED: []}
    for n in sizes:
        dx, dy, d_out = empty(n), empty(n), empty(n)
        fill(dx, 1.0)
        fill(dy, 2.0)

        def launch(dx=dx, dy=dy, d_out=d_out):
            axpy_v2(A, dx, dy, out=d_out)

        for name, flush in ((WARM, False), (FLUSHED, True)):
            ms = timer(launch, flush, repeat)
            series[name].append(12 * n / ms / 1e6)  # bytes / ms / 1e6 = GB/s
    l2 = device_info()["l2_cache_bytes"]
    warm_peak = max(series[WARM])
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
            "ratio": warm_peak / series[FLUSHED][-1],
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
        "ratio": Note(
            "L2 热时的最高带宽是最大 n 处 L2 清空时带宽的多少倍",
            "peak warm bandwidth over flushed bandwidth at the largest n",
            "{:,.2f}×",
        ),
    },
    zh={
        "n (float32 elements)": "n（float32 元素个数）",
        "GB/s": "GB/s",
        WARM: "L2 保持热（反复用同一组数组）",
        FLUSHED: "每次启动前清空 L2",
    },
)
