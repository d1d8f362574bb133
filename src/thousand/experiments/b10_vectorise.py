"""B10: z = x + y four ways, n = 2^10 .. 2^24 float32.

The same operation everywhere: a Python loop (over lists of Python floats, and the
same loop over NumPy arrays), NumPy (one ufunc call, one thread), NumPy split over
every core with a thread pool (ufuncs release the GIL: OpenMP's parallel for, by
hand), and the GPU kernel of B1 (vector_add v5, data already on the device).

The CPU figures are taken on the CPU of the machine that records the run. Host times
are medians of the host clock; calls too short for it are timed in batches.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from thousand.cuda import cdiv, empty, median, time_ms, to_device
from thousand.experiments import Experiment, ExperimentError, Note
from thousand.kernels.vector_add import vector_add

SIZES = [2**k for k in range(10, 25)]
QUICK_SIZES = [2**k for k in range(10, 13)]
PYTHON_MAX = 2**20  # the loops stop here: a call takes a good fraction of a second
TOO_SLOW_S = 1.0  # ...or sooner, on a machine where one call takes longer than this

LOOP_LISTS = "Python loop over lists"
LOOP_ARRAYS = "Python loop over NumPy arrays"
NUMPY_ONE = "NumPy, 1 thread"
NUMPY_ALL = "NumPy, all cores (thread pool)"
GPU = "GPU kernel (vector_add v5)"


# --8<-- [start:loop]
def add_loop(x, y, out):
    """One element at a time: lists of floats, or NumPy arrays, the same code."""
    for i in range(len(x)):
        out[i] = x[i] + y[i]


# --8<-- [end:loop]


# --8<-- [start:parallel-for]
class ParallelAdd:
    """out = x + y with one chunk per core, each chunk one np.add call on a pool
    thread. NumPy releases the GIL inside the ufunc's loop, so the chunks run at
    the same time: what `#pragma omp parallel for` does with a C loop."""

    def __init__(self, workers: int):
        self.workers = workers
        self.pool = ThreadPoolExecutor(max_workers=workers)

    def chunks(self, x, y, out):
        n = len(x)
        step = cdiv(cdiv(n, self.workers), 16) * 16  # 64-byte multiples: no chunk
        return [  # shares a cache line of `out` with its neighbour
            (x[s : s + step], y[s : s + step], out[s : s + step])
            for s in range(0, n, step)
        ]

    def __call__(self, chunks):
        futures = [self.pool.submit(np.add, a, b, out=o) for a, b, o in chunks]
        for f in futures:
            f.result()  # waits, and re-raises an error from the thread


# --8<-- [end:parallel-for]


def usable_cpus() -> int:
    """The CPUs this process may run on (a container may allow fewer than the
    machine has, which is all os.cpu_count() reports)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def host_ms(fn, repeat: int) -> float:
    """Median milliseconds of fn() on the host clock. The first call warms up and
    measures; calls under a millisecond are then timed in batches that last one."""
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    batch = 1 if first >= 1e-3 else min(2**16, int(1e-3 / max(first, 1e-7)) + 1)
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        samples.append((time.perf_counter() - t0) * 1e3 / batch)
    return median(samples)


def _same(got, expected, what: str) -> None:
    """Every way must compute the same float32 sums, or its time means nothing."""
    if not np.array_equal(got, expected):
        raise ExperimentError(f"b10-vectorise: {what} computed something else")


def _one_size(n: int, rng, repeat: int, parallel: ParallelAdd, loops: bool) -> dict:
    """Milliseconds of each way at size n (the loops only where `loops`)."""
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    out = np.empty_like(x)
    ms = dict.fromkeys((LOOP_LISTS, LOOP_ARRAYS))
    if loops:
        xs, ys, zs = x.tolist(), y.tolist(), [0.0] * n
        ms[LOOP_LISTS] = host_ms(lambda: add_loop(xs, ys, zs), 3)
        ms[LOOP_ARRAYS] = host_ms(lambda: add_loop(x, y, out), 3)
        _same(out, x + y, LOOP_ARRAYS)
        _same(np.float32(zs), x + y, LOOP_LISTS)  # float64 sums, rounded once
    ms[NUMPY_ONE] = host_ms(lambda: np.add(x, y, out=out), repeat)
    chunks = parallel.chunks(x, y, out)
    out.fill(0)
    ms[NUMPY_ALL] = host_ms(lambda: parallel(chunks), repeat)
    _same(out, x + y, NUMPY_ALL)
    dx, dy, d_out = to_device(x), to_device(y), empty((n,))
    ms[GPU] = median(
        time_ms(lambda: vector_add(dx, dy, out=d_out, version=5), repeat=repeat)
    )
    _same(d_out.get(), x + y, GPU)
    return ms


def run(quick: bool) -> dict:
    sizes = QUICK_SIZES if quick else SIZES
    repeat = 3 if quick else 7
    cores = usable_cpus()
    parallel = ParallelAdd(cores)
    rng = np.random.default_rng(0)
    series = {n: [] for n in (LOOP_LISTS, LOOP_ARRAYS, NUMPY_ONE, NUMPY_ALL, GPU)}
    loops = True
    try:
        for n in sizes:
            ms = _one_size(n, rng, repeat, parallel, loops and n <= PYTHON_MAX)
            for name, value in ms.items():
                series[name].append(value)
            if ms[LOOP_ARRAYS] is not None:  # the next n doubles the loops' time
                slowest = max(ms[LOOP_LISTS], ms[LOOP_ARRAYS])
                loops = 2 * slowest < TOO_SLOW_S * 1e3
    finally:
        parallel.pool.shutdown()

    last = len(sizes) - 1
    both = max(i for i, v in enumerate(series[LOOP_LISTS]) if v is not None)
    n_last = sizes[last]
    return {
        "kind": "lines",
        "x": {"label": "n (float32 elements)", "values": sizes, "log": True},
        "y": {"label": "ms", "log": True, "format": "{:,.4g}"},
        "series": series,
        "notes": {
            "numpy_vs_loop": series[LOOP_LISTS][both] / series[NUMPY_ONE][both],
            "arrays_vs_lists": series[LOOP_ARRAYS][both] / series[LOOP_LISTS][both],
            "loop_n": sizes[both],
            "threads_vs_numpy": series[NUMPY_ONE][last] / series[NUMPY_ALL][last],
            "gpu_vs_threads": series[NUMPY_ALL][last] / series[GPU][last],
            "numpy_gbps": 12 * n_last / series[NUMPY_ONE][last] / 1e6,
            "threads_gbps": 12 * n_last / series[NUMPY_ALL][last] / 1e6,
            "cores": cores,
        },
    }


EXPERIMENT = Experiment(
    name="b10-vectorise",
    title={
        "zh": "z = x + y：Python 循环、NumPy、NumPy 多线程与 GPU 的耗时",
        "en": "z = x + y: a Python loop, NumPy, NumPy on every core, and the GPU",
    },
    run=run,
    families=("vector_add",),
    notes={
        "numpy_vs_loop": Note(
            "NumPy 比列表上的 Python 循环快（两者都跑了的最大 n）",
            "NumPy over the Python loop on lists, at the largest n both ran",
            "{:,.0f}×",
        ),
        "arrays_vs_lists": Note(
            "同一个循环，遍历 NumPy 数组比遍历列表慢",
            "The same loop over NumPy arrays instead of lists: slower by",
            "{:,.1f}×",
        ),
        "loop_n": Note("Python 循环跑到的最大 n", "Largest n the loops ran", "{:,.0f}"),
        "threads_vs_numpy": Note(
            "全部核心比单线程 NumPy 快（最大的 n）",
            "Every core over one NumPy thread, at the largest n",
            "{:,.1f}×",
        ),
        "gpu_vs_threads": Note(
            "GPU 核函数比全部核心的 NumPy 快（最大的 n，数据已在显存）",
            "The GPU kernel over NumPy on every core, at the largest n (data on "
            "the device)",
            "{:,.1f}×",
        ),
        "numpy_gbps": Note(
            "单线程 NumPy 的带宽（最大的 n，GB/s，按 12n 字节）",
            "One NumPy thread's bandwidth at the largest n (GB/s, 12n bytes)",
            "{:,.1f}",
        ),
        "threads_gbps": Note(
            "全部核心的带宽（最大的 n，GB/s，按 12n 字节）",
            "Every core's bandwidth at the largest n (GB/s, 12n bytes)",
            "{:,.1f}",
        ),
        "cores": Note(
            "线程池的线程数（本进程可用的 CPU 数）",
            "Threads in the pool (the CPUs this process may run on)",
            "{:,.0f}",
        ),
    },
    zh={
        "n (float32 elements)": "n（float32 元素个数）",
        "ms": "毫秒",
        LOOP_LISTS: "Python 循环（列表）",
        LOOP_ARRAYS: "Python 循环（NumPy 数组）",
        NUMPY_ONE: "NumPy，单线程",
        NUMPY_ALL: "NumPy，全部核心（线程池）",
        GPU: "GPU 核函数（vector_add v5）",
    },
)
