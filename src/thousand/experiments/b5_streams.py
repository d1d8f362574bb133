"""B5: streams overlapping copies and kernels, drawn as a timeline.

python -m thousand.experiments b5-streams

64 MiB of float32 in 8 chunks; each chunk is copied to the device, goes through
B1's sigmoid kernel and is copied back. The same 24 operations, issued three ways:

- "1 stream": all on one stream, so each waits for the one before it;
- "4 streams": chunk i on stream i % 4, host buffers page-locked, so chunk i can be
  copied in while chunk i-1 is in the kernel and chunk i-2 is copied out;
- "4 streams, pageable": the same from and to plain NumPy arrays. An async copy
  from or to pageable memory is synchronous with respect to the host (the driver
  stages it through its own page-locked buffer), so nothing overlaps.

An event is recorded before and after every operation, on its stream. An event
marks the moment its stream reaches it, so the "before" event of a copy that waits
for a copy engine busy with another stream's copy fires before the copy starts.
Lanes are therefore per engine (H2D, kernel, D2H): in a lane, a span starts at the
later of its own "before" event and the end of the span before it, so the spans of
a lane never overlap and add up to the time that engine was busy. Every run's
output is compared with NumPy's sigmoid.
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import cdiv, driver, launch
from thousand.experiments import Experiment, ExperimentError, Note
from thousand.kernels.family import rel_error
from thousand.kernels.sigmoid import FAMILY as SIGMOID
from thousand.kernels.sigmoid import sigmoid_ref

MiB = 2**20
CHUNKS = 8
BLOCK = 256
ENGINES = ("H2D", "kernel", "D2H")
CONFIGS = (  # name, streams, host memory
    ("1 stream", 1, "pinned"),
    ("4 streams", 4, "pinned"),
    ("4 streams, pageable", 4, "pageable"),
)


def engine_lanes(config: str, ops: list[tuple[str, float, float]]) -> dict:
    """(engine, before_ms, after_ms) per operation -> {"config: engine": spans}.

    In each engine's lane the spans are taken in the order they ended, and each
    starts no earlier than the one before it ended (it waited behind it)."""
    lanes = {}
    for engine in ENGINES:
        mine = sorted((op for op in ops if op[0] == engine), key=lambda op: op[2])
        spans, busy_until = [], 0.0
        for _, before, after in mine:
            start = min(max(before, busy_until), after)
            spans.append([engine, start, after])
            busy_until = after
        if spans:
            lanes[f"{config}: {engine}"] = spans
    return lanes


def from_first(ops: list[tuple[str, float, float]]) -> list[tuple[str, float, float]]:
    """Times relative to the first operation's "before" event."""
    t0 = min(before for _, before, _ in ops)
    return [(engine, before - t0, after - t0) for engine, before, after in ops]


def total_ms(ops: list[tuple[str, float, float]]) -> float:
    return max(after for *_, after in ops) - min(before for _, before, _ in ops)


# --8<-- [start:pipeline]
def timed(drv, ops: list, engine: str, stream, fn, /, *args, **kwargs) -> None:
    """Queue fn(*args, **kwargs) on `stream` between two events, kept in `ops`."""
    before, after = drv.Event(), drv.Event()
    before.record(stream)
    fn(*args, **kwargs)
    after.record(stream)
    ops.append((engine, before, after))


def pipeline(drv, streams, h_in, h_out, d_in, d_out, chunk: int) -> list:
    """h_out = sigmoid(h_in) chunk by chunk, chunk i on streams[i % len(streams)]."""
    ops = []
    for i in range(CHUNKS):
        s = streams[i % len(streams)]
        lo, hi = i * chunk, (i + 1) * chunk
        x, y = int(d_in) + 4 * lo, int(d_out) + 4 * lo  # this chunk on the device
        timed(drv, ops, "H2D", s, drv.memcpy_htod_async, x, h_in[lo:hi], s)
        kernel = "sigmoid", "sigmoid_v1", (cdiv(chunk, BLOCK),), (BLOCK,)
        args = np.uintp(x), np.uintp(y), np.int32(chunk)
        timed(drv, ops, "kernel", s, launch, *kernel, *args, stream=s)
        timed(drv, ops, "D2H", s, drv.memcpy_dtoh_async, h_out[lo:hi], y, s)
    return ops


# --8<-- [end:pipeline]


def measure(drv, n_streams: int, memory: str, x: np.ndarray, runs: int) -> list:
    """The operations' (engine, before, after) in ms, for the run of median length."""
    streams = [drv.Stream() for _ in range(n_streams)]
    if memory == "pinned":
        h_in = drv.pagelocked_empty(x.size, np.float32)
        h_out = drv.pagelocked_empty(x.size, np.float32)
    else:
        h_in, h_out = np.empty_like(x), np.empty_like(x)
    h_in[:] = x
    want = sigmoid_ref(x)
    d_in, d_out = drv.mem_alloc(x.nbytes), drv.mem_alloc(x.nbytes)
    recorded = []
    try:
        for r in range(runs + 1):  # run 0 warms up (compiles, loads the module)
            h_out.fill(np.nan)
            drv.Context.synchronize()
            origin = drv.Event()
            origin.record()
            origin.synchronize()  # everything below is queued after this point
            ops = pipeline(drv, streams, h_in, h_out, d_in, d_out, x.size // CHUNKS)
            drv.Context.synchronize()  # h_out is complete only now
            err = rel_error(h_out, want)
            if not err <= SIGMOID.tolerance:
                raise ExperimentError(
                    f"b5-streams: {n_streams} stream(s), {memory}: sigmoid off "
                    f"NumPy's by {err:.2e} (allowed {SIGMOID.tolerance:.0e})"
                )
            if r:
                recorded.append(
                    [(e, b.time_since(origin), a.time_since(origin)) for e, b, a in ops]
                )
    finally:
        d_in.free()
        d_out.free()
        if memory == "pinned":
            h_in.base.free()
            h_out.base.free()
    recorded.sort(key=total_ms)
    return from_first(recorded[len(recorded) // 2])


def run(quick: bool) -> dict:
    drv = driver()
    n = (4 if quick else 64) * MiB // 4
    x = np.random.default_rng(0).standard_normal(n, dtype=np.float32) * 4
    lanes, totals = {}, {}
    for name, n_streams, memory in CONFIGS:
        ops = measure(drv, n_streams, memory, x, runs=2 if quick else 5)
        lanes.update(engine_lanes(name, ops))
        totals[name] = total_ms(ops)
    serial, overlapped = totals["1 stream"], totals["4 streams"]
    engines = drv.device_attribute.ASYNC_ENGINE_COUNT  # DMA engines for copies
    return {
        "kind": "timeline",
        "lanes": lanes,
        "notes": {
            "serial_ms": serial,
            "overlapped_ms": overlapped,
            "speedup": serial / overlapped,
            "pageable_ms": totals["4 streams, pageable"],
            "copy_engines": drv.Context.get_device().get_attribute(engines),
        },
    }


def _lane_names_zh() -> dict[str, str]:
    config = {
        "1 stream": "1 个流",
        "4 streams": "4 个流",
        "4 streams, pageable": "4 个流，可分页内存",
    }
    engine = {"H2D": "主机→设备", "kernel": "核函数", "D2H": "设备→主机"}
    return {
        f"{c}: {e}": f"{config[c]}：{engine[e]}" for c, *_ in CONFIGS for e in ENGINES
    }


EXPERIMENT = Experiment(
    name="b5-streams",
    title={
        "zh": "流让拷贝与核函数重叠（8 块：拷入、sigmoid、拷回）",
        "en": "Streams overlap copies and kernels (8 chunks: in, sigmoid, out)",
    },
    run=run,
    families=("sigmoid",),
    gpu_only=(
        "streams, page-locked memory and the GPU's copy engines are the driver's and "
        "the hardware's; the CPU backend runs every operation in order, to the end"
    ),
    notes={
        "serial_ms": Note(
            "1 个流（串行）的总时间 (ms)", "total time, 1 stream (serial), ms", "{:.3f}"
        ),
        "overlapped_ms": Note(
            "4 个流（重叠）的总时间 (ms)",
            "total time, 4 streams (overlapped), ms",
            "{:.3f}",
        ),
        "speedup": Note("4 个流比 1 个流快", "4 streams over 1 stream", "{:.2f}×"),
        "pageable_ms": Note(
            "4 个流但用可分页内存的总时间 (ms)",
            "total time, 4 streams with pageable memory, ms",
            "{:.3f}",
        ),
        "copy_engines": Note(
            "设备报告的拷贝引擎数 (ASYNC_ENGINE_COUNT)",
            "copy engines the device reports (ASYNC_ENGINE_COUNT)",
            "{:.0f}",
        ),
    },
    zh=_lane_names_zh(),
)
