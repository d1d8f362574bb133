"""B4: bandwidth over predicted occupancy. Blocks of 256 threads; a dynamic
shared-memory footprint per block, chosen with the driver's occupancy calculator,
lets exactly 8, 7, ..., 1 blocks share an SM. The same footprint goes to three
copies: occupancy_v1 (one float per thread), occupancy_v2 (64 floats per thread in
registers) and occupancy_v3 (the same, spilled). v2 and v3 use no shared memory:
the footprint only takes room, as a tiled kernel's buffers would. Their registers
already cap their occupancy, so they have fewer points.

x is the occupancy the driver predicts for each kernel and footprint; y is 8n bytes
over the median time. Little's law turns v1's point at full occupancy into the
memory latency it implies: bytes in flight = bandwidth x latency. Only the loads
keep a thread waiting, so the bandwidth that pairs with them is the read half of
the 8n bytes. It counts every resident thread's load as in flight all the time, so
the latency is an upper bound.
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import device_info, empty, median, time_ms, to_device
from thousand.experiments import Experiment, Note
from thousand.kernels.occupancy import FLOAT, occupancy, shared_limit

BLOCK = 256
ONE = "1 float per thread (v1)"
MANY = "64 floats per thread (v2)"
SPILLED = "64 floats per thread, spilled (v3)"
VERSIONS = {ONE: 1, MANY: 2, SPILLED: 3}


def footprints() -> list[int]:
    """For b = 8, 7, ..., 1 blocks per SM: the largest footprint, in whole KiB, with
    which the driver still fits b blocks of occupancy_v1 on an SM."""
    from thousand.cuda.occupancy import driver_function

    fn = driver_function("occupancy", "occupancy_v1")

    def fits(kib: int) -> int:
        return fn.blocks_per_sm(BLOCK, kib * 1024)

    most = device_info()["max_threads_per_sm"] // BLOCK
    found = []
    for b in range(most, 0, -1):
        lo, hi = 1, shared_limit() // 1024  # 1 KiB: v1's own float per thread
        if fits(lo) < b:
            continue  # even the smallest footprint leaves fewer than b blocks
        while lo < hi:  # binary search: the largest k with fits(k) >= b
            mid = (lo + hi + 1) // 2
            if fits(mid) >= b:
                lo = mid
            else:
                hi = mid - 1
        found.append(lo * 1024)
    return found


def run(quick: bool) -> dict:
    from thousand.cuda.occupancy import occupancy as predicted

    n = 2**14 if quick else 2**28
    x = np.random.default_rng(0).random(n, dtype=np.float32)  # any data will do
    dx, d_out = to_device(x), empty(n)
    points = {name: {} for name in VERSIONS}  # occupancy (%) -> GB/s
    for shared in footprints():
        for name, version in VERSIONS.items():
            kernel = f"occupancy_v{version}"
            pct = 100 * predicted("occupancy", kernel, BLOCK, shared)["fraction"]
            if pct == 0 or pct in points[name]:
                continue  # registers already set this occupancy: measured once

            def once(version=version, shared=shared):
                occupancy(dx, out=d_out, version=version, block=BLOCK, shared=shared)

            samples = time_ms(once, warmup=1 if quick else 3, repeat=2 if quick else 15)
            points[name][pct] = 2 * FLOAT * n / median(samples) / 1e6
    xs = sorted(set().union(*points.values()))
    series = {name: [points[name].get(p) for p in xs] for name in VERSIONS}
    one = points[ONE]
    full = max(one)  # v1's highest occupancy (100% where 8 blocks fit)
    info = device_info()
    in_flight = info["sm_count"] * full / 100 * info["max_threads_per_sm"] * FLOAT
    read_gbps = one[full] / 2  # a copy reads half the bytes it moves
    latency_ns = in_flight / read_gbps  # bytes / (GB/s) = ns
    return {
        "kind": "lines",
        "x": {"label": "predicted occupancy (%)", "values": xs},
        "y": {"label": "bandwidth (GB/s)", "format": "{:,.0f}"},
        "series": series,
        "notes": {
            "v1_full": one[full],
            "latency_ns": latency_ns,
            "v1_90": min(p for p, v in one.items() if v >= 0.9 * max(one.values())),
            "v2_lowest": points[MANY][min(points[MANY])],
        },
    }


EXPERIMENT = Experiment(
    name="b4-latency-hiding",
    title={
        "zh": "带宽随预测占用率的变化：每线程 1 个 float，还是 64 个 float 同时在途",
        "en": "Bandwidth over predicted occupancy: 1 or 64 floats in flight per thread",
    },
    run=run,
    families=("occupancy",),
    gpu_only="the footprints and occupancies come from the CUDA driver's calculator",
    notes={
        "v1_full": Note(
            "v1 在最高占用率下的带宽 (GB/s)",
            "v1 at its highest occupancy (GB/s)",
            "{:,.0f}",
        ),
        "latency_ns": Note(
            "利特尔定律反推的访存延迟上限："
            "v1 满占用时最多在途的读取字节数 ÷ 读带宽 (ns)",
            "memory latency by Little's law, at most: v1's load bytes in flight at its "
            "highest occupancy (one float per thread) over its read bandwidth (ns)",
            "{:,.0f}",
        ),
        "v1_90": Note(
            "v1 达到自身最高带宽 90% 所需的最低占用率 (%)",
            "lowest occupancy at which v1 reaches 90% of its best (%)",
            "{:,.1f}",
        ),
        "v2_lowest": Note(
            "v2 在它最低的占用率下的带宽 (GB/s)",
            "v2 at its lowest occupancy (GB/s)",
            "{:,.0f}",
        ),
    },
    zh={
        "predicted occupancy (%)": "预测占用率 (%)",
        "bandwidth (GB/s)": "带宽 (GB/s)",
        ONE: "每线程 1 个 float (v1)",
        MANY: "每线程 64 个 float (v2)",
        SPILLED: "每线程 64 个 float，有溢出 (v3)",
    },
)
