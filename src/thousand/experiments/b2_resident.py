"""B2: keep the data on the device. K steps of y <- a x + y, three ways.

"round trip every step": each step copies x and y to the device, runs the kernel and
copies y back, as a loop that calls the GPU on host arrays does. "resident on the
device": x and y go over once, K kernels update y in place, y comes back once.
"NumPy on the CPU": the same K steps with no device at all. Device buffers are
allocated once, outside the timing, so the two device series differ only in copies.
Times are host-clock times around a synchronised region: they include the copies
(from pageable memory, so synchronous anyway) and the launches, which is what a
program waits for; CUDA events would see only the device's side.
"""

from __future__ import annotations

import time

import numpy as np

from thousand.cuda import empty, median, synchronize
from thousand.experiments import Experiment, Note
from thousand.kernels.axpy import axpy

A = 0.5  # y grows by a x a step: hundreds of steps stay far from overflow

ROUND_TRIP = "round trip every step"
RESIDENT = "resident on the device"
NUMPY = "NumPy on the CPU"


# --8<-- [start:loops]
def round_trip(k, x, y, dx, dy):
    """K steps, each a round trip: x and y to the device, one kernel, y back."""
    for _ in range(k):
        dx.set(x)
        dy.set(y)
        axpy(A, dx, dy, out=dy)
        dy.get(ary=y)


def resident(k, x, y, dx, dy):
    """The same K steps with the data kept on the device: in once, out once."""
    dx.set(x)
    dy.set(y)
    for _ in range(k):
        axpy(A, dx, dy, out=dy)
    dy.get(ary=y)


# --8<-- [end:loops]


def numpy_steps(k, x, y, tmp):
    for _ in range(k):
        np.multiply(x, np.float32(A), out=tmp)
        np.add(tmp, y, out=y)


def _host_ms(fn, k: int, repeat: int) -> float:
    """Median wall-clock milliseconds of fn(k), the device idle before and after."""
    samples = []
    for _ in range(repeat):
        synchronize()
        t0 = time.perf_counter()
        fn(k)
        synchronize()
        samples.append((time.perf_counter() - t0) * 1e3)
    return median(samples)


def run(quick: bool) -> dict:
    n = 2**12 if quick else 2**24
    steps = [2**i for i in range(3 if quick else 7)]  # K = 1, 2, 4, ...
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    tmp = np.empty_like(y)
    dx, dy = empty(n), empty(n)
    ways = {
        ROUND_TRIP: lambda k: round_trip(k, x, y, dx, dy),
        RESIDENT: lambda k: resident(k, x, y, dx, dy),
        NUMPY: lambda k: numpy_steps(k, x, y, tmp),
    }
    ways[RESIDENT](1)  # the first launch loads the module: keep it out of the timings
    series = {name: [] for name in ways}
    for k in steps:
        # From K = 16 on, one run already spans 16 or more copies of 64 MiB or
        # NumPy passes: long against the timer's noise, so one run is enough.
        repeat = 3 if k < 16 else 1
        for name, fn in ways.items():
            series[name].append(_host_ms(fn, k, repeat))
    last = -1
    return {
        "kind": "lines",
        "x": {"label": "steps K", "values": steps, "log": True},
        "y": {"label": "total time (ms)", "log": True, "format": "{:,.2f}"},
        "series": series,
        "notes": {
            "n": float(n),
            "ratio": series[ROUND_TRIP][last] / series[RESIDENT][last],
            "numpy_ratio": series[NUMPY][last] / series[RESIDENT][last],
        },
    }


EXPERIMENT = Experiment(
    name="b2-resident",
    title={
        "zh": "K 步 y ← a·x + y 的总时间：每步往返拷贝，还是数据留在设备上",
        "en": "K steps of y ← a·x + y: round trip each step or resident",
    },
    run=run,
    families=("axpy",),
    notes={
        "n": Note("向量长度 n（float32 元素）", "vector length n (float32)", "{:,.0f}"),
        "ratio": Note(
            "K 最大时，每步往返的总时间是数据常驻的多少倍",
            "at the largest K, round trip every step over resident",
            "{:,.1f}×",
        ),
        "numpy_ratio": Note(
            "K 最大时，CPU 上的 NumPy 是数据常驻的多少倍",
            "at the largest K, NumPy on the CPU over resident",
            "{:,.1f}×",
        ),
    },
    zh={
        "steps K": "步数 K",
        "total time (ms)": "总时间 (ms)",
        ROUND_TRIP: "每步往返拷贝",
        RESIDENT: "数据常驻设备",
        NUMPY: "CPU 上的 NumPy",
    },
)
