"""B15: what one call costs on the way from Python to the GPU, with no work to hide
it. Each way launches one kernel per call; the extension's ways and PyCUDA's
launch the same kernel that does nothing (beyond/empty.cu), PyTorch's native op
negates one float in place (a launch of its own kernel, no allocation).

Each figure is a host-clock time: CALLS calls back to back, then one
torch.cuda.synchronize(), divided by CALLS; the median of WINDOWS such windows,
after a warm-up (the first call builds or compiles). It is what a loop of calls
costs the host, which is what a small op's speed comes down to.
"""

from __future__ import annotations

import time

from thousand.cuda import median
from thousand.experiments import Experiment, Note

CALLS, WINDOWS = 5000, 9
QUICK = dict(calls=200, windows=3)

NATIVE = "PyTorch op (x.neg_(), 1 float)"
EXT = "extension function (pybind11)"
OP = "custom op (torch.ops.thousand)"
LAUNCH = "PyCUDA, thousand.cuda.launch"
RAW = "PyCUDA function, called directly"
WAYS = (NATIVE, EXT, OP, LAUNCH, RAW)
UNIT = "µs per call"


def us_per_call(call, sync, calls: int, windows: int) -> float:
    for _ in range(max(10, calls // 10)):
        call()
    sync()
    samples = []
    for _ in range(windows):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        sync()  # every call's kernel has run, not only been queued
        samples.append(1e6 * (time.perf_counter() - start) / calls)
    return median(samples)


# --8<-- [start:ways]
def ways() -> dict:
    """name -> a call that makes one launch."""
    import torch

    from thousand.beyond import extension
    from thousand.cuda import kernel, launch

    ext = extension.load()
    t = torch.zeros(1, device="cuda")  # names the GPU; the empty kernel ignores it
    empty = kernel(extension.EMPTY, "empty_kernel")  # PyCUDA compiles empty.cu
    return {
        NATIVE: t.neg_,
        EXT: lambda: ext.launch_empty(t),
        OP: lambda: torch.ops.thousand.launch_empty(t),
        LAUNCH: lambda: launch(extension.EMPTY, "empty_kernel", (1,), (1,)),
        RAW: lambda: empty(grid=(1, 1, 1), block=(1, 1, 1)),
    }


# --8<-- [end:ways]


def run(quick: bool) -> dict:
    import torch

    calls, windows = (QUICK["calls"], QUICK["windows"]) if quick else (CALLS, WINDOWS)
    us = {
        name: us_per_call(call, torch.cuda.synchronize, calls, windows)
        for name, call in ways().items()
    }
    return {
        "kind": "bars",
        "x": {"label": "way", "values": list(WAYS)},
        "y": {"label": UNIT, "format": "{:.2f}"},
        "series": {UNIT: [us[w] for w in WAYS]},
        "notes": {
            "native_us": us[NATIVE],
            "ext_us": us[EXT],
            "op_us": us[OP],
            "launch_us": us[LAUNCH],
            "raw_us": us[RAW],
            "op_minus_ext_us": us[OP] - us[EXT],
            "ext_over_native": us[EXT] / us[NATIVE],
            "op_over_native": us[OP] / us[NATIVE],
        },
    }


EXPERIMENT = Experiment(
    name="b15-call-cost",
    title={
        "zh": "一次调用的代价：空核函数经扩展、自定义算子与 PyCUDA 启动，"
        "对比 PyTorch 原生算子",
        "en": "What one call costs: an empty kernel through the extension, the "
        "custom op and PyCUDA, against a native PyTorch op",
    },
    run=run,
    families=("gelu", "gelu_backward"),
    files=(
        "beyond/extension.py",
        "beyond/gelu_extension.cpp",
        "beyond/gelu_extension.cu",
        "beyond/empty.cu",
    ),
    gpu_only="it builds a CUDA extension with nvcc and times launches on a GPU",
    notes={
        "native_us": Note(
            "PyTorch 原生算子，每次调用（微秒）", "native PyTorch op, per call (µs)"
        ),
        "ext_us": Note(
            "扩展函数（pybind11），每次调用（微秒）",
            "extension function (pybind11), per call (µs)",
        ),
        "op_us": Note(
            "自定义算子（经分发器），每次调用（微秒）",
            "custom op (through the dispatcher), per call (µs)",
        ),
        "launch_us": Note(
            "PyCUDA，本包的 launch()，每次调用（微秒）",
            "PyCUDA, the package's launch(), per call (µs)",
        ),
        "raw_us": Note(
            "PyCUDA 函数对象直接调用（微秒）",
            "PyCUDA function called directly (µs)",
        ),
        "op_minus_ext_us": Note(
            "自定义算子比直接调用扩展多花（微秒）",
            "what the custom op adds to the extension call (µs)",
        ),
        "ext_over_native": Note(
            "扩展函数 / 原生算子（倍）",
            "extension function / native op (times)",
            "{:.2f}×",
        ),
        "op_over_native": Note(
            "自定义算子 / 原生算子（倍）", "custom op / native op (times)", "{:.2f}×"
        ),
    },
    zh={
        "way": "调用方式",
        UNIT: "每次调用的微秒数",
        NATIVE: "PyTorch 原生算子（x.neg_()，1 个浮点数）",
        EXT: "扩展函数（pybind11）",
        OP: "自定义算子（torch.ops.thousand）",
        LAUNCH: "PyCUDA，thousand.cuda.launch",
        RAW: "PyCUDA 函数对象，直接调用",
    },
)
