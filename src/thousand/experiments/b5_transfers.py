"""B5: host <-> device bandwidth over transfer size, for each kind of host memory.

python -m thousand.experiments b5-transfers

Seven lines over sizes from 4 KiB to 256 MiB, each in GB/s: the bytes of the array
over the time CUDA events measured around the operation, median of several repeats.

- pageable / pinned, H2D and D2H: cuMemcpyHtoD / cuMemcpyDtoH between device memory
  and a plain NumPy array (pageable) or an array from pagelocked_empty (pinned).
  Both calls return once the copy no longer needs the host buffer; the stop event
  is queued behind the copy, so the events time the copy itself on the GPU's clock.
- mapped (zero-copy): no copy at all. B1's copy kernel (copy_v2) reads a DEVICEMAP
  page-locked host buffer through its device pointer: every load crosses the link.
- managed, first touch: the same kernel reads a managed array the host has just
  written, so its pages migrate to the GPU on the kernel's page faults.
- managed, resident: the kernel again, the pages already in device memory.

Every result is copied back and compared with what was sent, so a copy or a kernel
that did nothing stops the experiment instead of drawing a line.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from thousand.cuda import cdiv, driver, grid_stride_blocks, launch, median, time_ms
from thousand.experiments import Experiment, ExperimentError, Note

KiB, MiB = 2**10, 2**20
SIZES = tuple(4 * KiB * 4**k for k in range(9))  # 4 KiB, 16 KiB, ..., 256 MiB
QUICK_SIZES = (4 * KiB, 1 * MiB, 256 * MiB)
BENCH = 256 * MiB  # where the benchmark sets pinned against pageable
BLOCK = 256
COPIES = ("pageable H2D", "pinned H2D", "pageable D2H", "pinned D2H")
MAPPED = "mapped: kernel reads host memory"
FIRST = "managed: first touch"
RESIDENT = "managed: resident"


def repeats(nbytes: int, quick: bool) -> int:
    if quick:
        return 3
    return 20 if nbytes <= 16 * MiB else 5


def gbps(nbytes: int, ms: float) -> float:
    return nbytes / ms / 1e6


def check(what: str, got: np.ndarray, want: np.ndarray) -> None:
    """Stop unless `got` equals `want` element for element."""
    if got.shape != want.shape or not np.array_equal(got, want):
        bad = np.flatnonzero(got != want) if got.shape == want.shape else [0]
        i = int(bad[0])
        raise ExperimentError(
            f"b5-transfers: {what}: element {i} is {got.flat[i]}, "
            f"expected {want.flat[i]}"
        )


def from_device(drv, d, n: int) -> np.ndarray:
    back = np.empty(n, np.float32)
    drv.memcpy_dtoh(back, d)
    return back


# --8<-- [start:copies]
def copies(drv, x: np.ndarray, sizes, quick: bool) -> dict[str, list[float]]:
    """GB/s of host-to-device and device-to-host copies, pageable and pinned."""
    top = max(sizes) // 4  # elements in the largest transfer
    pinned_in = drv.pagelocked_empty(top, np.float32)  # page-locked host memory
    pinned_out = drv.pagelocked_empty(top, np.float32)
    pageable_out = np.zeros(top, np.float32)  # an ordinary NumPy array, like x
    pinned_in[:] = x[:top]
    d = drv.mem_alloc(4 * top)
    rates = {name: [] for name in COPIES}
    try:
        for nbytes in sizes:
            n, reps = nbytes // 4, repeats(nbytes, quick)
            for kind, src in (("pageable", x[:n]), ("pinned", pinned_in[:n])):
                drv.memset_d32(d, 0, n)
                h2d = partial(drv.memcpy_htod, d, src)
                ms = median(time_ms(h2d, repeat=reps, flush_l2=False, hold=False))
                check(f"{kind} H2D, {nbytes} B", from_device(drv, d, n), x[:n])
                rates[f"{kind} H2D"].append(gbps(nbytes, ms))
            # d now holds x[:n]; copy it back into each kind of host memory
            for kind, host in (("pageable", pageable_out), ("pinned", pinned_out)):
                dst = host[:n]
                dst.fill(0)
                d2h = partial(drv.memcpy_dtoh, dst, d)
                ms = median(time_ms(d2h, repeat=reps, flush_l2=False, hold=False))
                check(f"{kind} D2H, {nbytes} B", dst, x[:n])
                rates[f"{kind} D2H"].append(gbps(nbytes, ms))
    finally:
        d.free()
        pinned_in.base.free()  # page-locked memory is scarce: give it back now
        pinned_out.base.free()
    return rates


# --8<-- [end:copies]


# --8<-- [start:mapped]
def copy_kernel(src: int, dst: int, n: int) -> None:
    """B1's copy_v2 (grid-stride, float4) from one GPU-visible address to another."""
    blocks = grid_stride_blocks(BLOCK, cdiv(n, 4))
    args = np.uintp(src), np.uintp(dst), np.int32(n)
    launch("copy", "copy_v2", (blocks,), (BLOCK,), *args)


def mapped(drv, x: np.ndarray, sizes, quick: bool) -> list[float]:
    """GB/s of a kernel that reads page-locked host memory where it lies."""
    top = max(sizes) // 4
    flags = drv.host_alloc_flags.DEVICEMAP  # map it into the GPU's address space
    host = drv.pagelocked_empty(top, np.float32, mem_flags=flags)
    host[:] = x[:top]
    src = host.base.get_device_pointer()  # where the GPU sees those same bytes
    d = drv.mem_alloc(4 * top)
    rates = []
    try:
        for nbytes in sizes:
            n = nbytes // 4
            drv.memset_d32(d, 0, n)
            run = partial(copy_kernel, src, int(d), n)
            ms = median(time_ms(run, repeat=repeats(nbytes, quick)))
            check(f"mapped read, {nbytes} B", from_device(drv, d, n), x[:n])
            rates.append(gbps(nbytes, ms))
    finally:
        d.free()
        host.base.free()
    return rates


# --8<-- [end:mapped]


# --8<-- [start:managed]
def managed(drv, x: np.ndarray, sizes, quick: bool) -> tuple[list, list]:
    """GB/s of the kernel reading a managed array: just written by the host (the
    pages migrate on the kernel's faults), then again with the pages resident."""
    d = drv.mem_alloc(max(sizes))
    first, resident = [], []
    try:
        for nbytes in sizes:
            n, reps = nbytes // 4, repeats(nbytes, quick)
            flags = drv.mem_attach_flags.GLOBAL  # any stream may touch it
            m = drv.managed_empty(n, np.float32, mem_flags=flags)
            run = partial(copy_kernel, m.base.get_device_pointer(), int(d), n)
            try:
                drv.memset_d32(d, 0, n)
                samples = []
                for _ in range(reps + 1):  # the first is a warm-up
                    drv.Context.synchronize()  # the host must not touch m while
                    m[:] = x[:n]  # a kernel runs; writing pulls its pages back
                    start, stop = drv.Event(), drv.Event()
                    start.record()
                    run()
                    stop.record()
                    stop.synchronize()
                    samples.append(stop.time_since(start))
                first.append(gbps(nbytes, median(samples[1:])))
                check(f"managed, {nbytes} B", from_device(drv, d, n), x[:n])
                drv.memset_d32(d, 0, n)
                ms = median(time_ms(run, warmup=1, repeat=reps))  # pages on the GPU
                check(f"managed again, {nbytes} B", from_device(drv, d, n), x[:n])
                resident.append(gbps(nbytes, ms))
            finally:
                drv.Context.synchronize()
                m.base.free()
    finally:
        d.free()
    return first, resident


# --8<-- [end:managed]


def run(quick: bool) -> dict:
    drv = driver()
    sizes = QUICK_SIZES if quick else SIZES
    x = np.random.default_rng(0).standard_normal(max(sizes) // 4, dtype=np.float32)
    series = copies(drv, x, sizes, quick)
    series[MAPPED] = mapped(drv, x, sizes, quick)
    series[FIRST], series[RESIDENT] = managed(drv, x, sizes, quick)
    at = sizes.index(BENCH)
    return {
        "kind": "lines",
        "x": {"label": "bytes", "values": list(sizes), "log": True},
        "y": {"label": "GB/s", "log": True, "format": "{:,.2f}"},
        "series": series,
        "notes": {
            "pinned_over_pageable_h2d_256MiB": series["pinned H2D"][at]
            / series["pageable H2D"][at],
            "peak_pinned_h2d_gbps": max(series["pinned H2D"]),
            "peak_pageable_h2d_gbps": max(series["pageable H2D"]),
            "peak_pinned_d2h_gbps": max(series["pinned D2H"]),
            "peak_mapped_gbps": max(series[MAPPED]),
            "managed_first_touch_256MiB_gbps": series[FIRST][at],
        },
    }


EXPERIMENT = Experiment(
    name="b5-transfers",
    title={
        "zh": "主机与设备之间的带宽：可分页、页锁定、映射与托管内存",
        "en": "Host-device bandwidth: pageable, pinned, mapped and managed memory",
    },
    run=run,
    families=("copy",),
    gpu_only=(
        "page-locked, mapped and managed memory and the GPU's copy engines are "
        "the driver's and the hardware's; the CPU backend does not model them"
    ),
    notes={
        "pinned_over_pageable_h2d_256MiB": Note(
            "256 MiB 主机到设备拷贝：页锁定内存比可分页内存快",
            "256 MiB host-to-device copy, pinned over pageable",
            "{:.2f}×",
        ),
        "peak_pinned_h2d_gbps": Note(
            "页锁定内存主机到设备的最高带宽 (GB/s)",
            "peak pinned host-to-device bandwidth (GB/s)",
            "{:,.1f}",
        ),
        "peak_pageable_h2d_gbps": Note(
            "可分页内存主机到设备的最高带宽 (GB/s)",
            "peak pageable host-to-device bandwidth (GB/s)",
            "{:,.1f}",
        ),
        "peak_pinned_d2h_gbps": Note(
            "页锁定内存设备到主机的最高带宽 (GB/s)",
            "peak pinned device-to-host bandwidth (GB/s)",
            "{:,.1f}",
        ),
        "peak_mapped_gbps": Note(
            "核函数直接读映射主机内存的最高带宽 (GB/s)",
            "peak bandwidth of a kernel reading mapped host memory (GB/s)",
            "{:,.1f}",
        ),
        "managed_first_touch_256MiB_gbps": Note(
            "256 MiB 托管内存首次访问（页面迁移）的带宽 (GB/s)",
            "256 MiB managed array, first touch by the GPU (GB/s)",
            "{:,.1f}",
        ),
    },
    zh={
        "bytes": "字节数",
        "GB/s": "GB/s",
        "pageable H2D": "可分页 主机→设备",
        "pinned H2D": "页锁定 主机→设备",
        "pageable D2H": "可分页 设备→主机",
        "pinned D2H": "页锁定 设备→主机",
        MAPPED: "映射：核函数直接读主机内存",
        FIRST: "托管：首次访问",
        RESIDENT: "托管：已驻留",
    },
)
