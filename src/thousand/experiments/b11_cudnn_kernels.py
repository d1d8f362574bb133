"""B11: what cuDNN runs for B11's benchmark layer (3 x 3, 64 -> 64 channels, 56 x 56,
N = 32, NHWC as PyTorch's channels_last): the kernels of one forward pass, one
input gradient and one filter gradient, named and timed by PyTorch's profiler
(CUPTI), with TF32 off and on, and the forward again after torch.backends.cudnn.
benchmark has timed cuDNN's candidates and kept the fastest. Each pass is drawn
from its first kernel's start; the chart's legend names the kernels (their C++
names cut at the first '(' or '<')."""

from __future__ import annotations

import numpy as np

from thousand.experiments import Experiment, Note

LAYER = (32, 56, 56, 64, 3, 3, 64)  # N, H, W, C, R, S, F; stride 1, padding 1
FORWARD, FORWARD_TF32, FORWARD_TUNED = (
    "forward (fp32)",
    "forward (TF32)",
    "forward, benchmark=True (fp32)",
)
DGRAD, WGRAD = "input gradient (fp32)", "filter gradient (fp32)"


def short(name: str) -> str:
    """A kernel's C++ name without its arguments and template parameters."""
    for stop in "(<":
        name = name.split(stop, 1)[0]
    return name.removeprefix("void ").strip()


def kernels(call) -> list[list]:
    """[name, start_ms, end_ms] of each GPU activity of one call, from the first."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    call()  # warm: cuDNN's plan is made, workspaces allocated
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        call()
        torch.cuda.synchronize()
    gpu = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    gpu.sort(key=lambda e: e.time_range.start)
    t0 = gpu[0].time_range.start
    return [
        [short(e.name), (e.time_range.start - t0) / 1e3, (e.time_range.end - t0) / 1e3]
        for e in gpu
    ]


def run(quick: bool) -> dict:
    import torch
    import torch.nn.functional as F

    N, H, W, C, R, S, K = LAYER
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((N, H, W, C), dtype=np.float32))
    x = x.cuda().permute(0, 3, 1, 2)  # NCHW view of NHWC memory: channels_last
    w = torch.from_numpy(rng.standard_normal((K, C, R, S), dtype=np.float32)).cuda()
    w = w.contiguous(memory_format=torch.channels_last)
    dy = torch.from_numpy(rng.standard_normal((N, H, W, K), dtype=np.float32))
    dy = dy.cuda().permute(0, 3, 1, 2)
    flags = torch.backends.cudnn
    before = flags.allow_tf32, flags.benchmark
    lanes = {}
    try:
        flags.allow_tf32, flags.benchmark = False, False
        lanes[FORWARD] = kernels(lambda: F.conv2d(x, w, padding=1))
        lanes[DGRAD] = kernels(
            lambda: torch.nn.grad.conv2d_input(x.shape, w, dy, padding=1)
        )
        lanes[WGRAD] = kernels(
            lambda: torch.nn.grad.conv2d_weight(x, w.shape, dy, padding=1)
        )
        flags.allow_tf32 = True
        lanes[FORWARD_TF32] = kernels(lambda: F.conv2d(x, w, padding=1))
        flags.allow_tf32, flags.benchmark = False, True
        lanes[FORWARD_TUNED] = kernels(lambda: F.conv2d(x, w, padding=1))
    finally:
        flags.allow_tf32, flags.benchmark = before

    def busy(lane):
        return sum(end - start for _, start, end in lanes[lane])

    return {
        "kind": "timeline",
        "lanes": lanes,
        "notes": {
            "forward_kernels": len(lanes[FORWARD]),
            "dgrad_kernels": len(lanes[DGRAD]),
            "wgrad_kernels": len(lanes[WGRAD]),
            "forward_ms": busy(FORWARD),
            "tuned_ms": busy(FORWARD_TUNED),
            "wgrad_ms": busy(WGRAD),
        },
    }


def _count(zh, en):
    return Note(zh, en, "{:.0f}")


def _ms(zh, en):
    return Note(zh, en, "{:.3f}")


EXPERIMENT = Experiment(
    name="b11-cudnn-kernels",
    title={
        "zh": "cuDNN 为 B11 的基准层启动了哪些核函数：前向、输入梯度、滤波器梯度",
        "en": "The kernels cuDNN runs for B11's benchmark layer: forward, input "
        "gradient, filter gradient",
    },
    run=run,
    gpu_only="it profiles cuDNN, which needs PyTorch with CUDA and a GPU",
    notes={
        "forward_kernels": _count(
            "前向（fp32）启动的核函数个数", "forward (fp32): kernels launched"
        ),
        "dgrad_kernels": _count(
            "输入梯度启动的核函数个数", "input gradient: kernels launched"
        ),
        "wgrad_kernels": _count(
            "滤波器梯度启动的核函数个数", "filter gradient: kernels launched"
        ),
        "forward_ms": _ms(
            "前向（fp32）GPU 忙碌时间 (ms)", "forward (fp32): GPU busy (ms)"
        ),
        "tuned_ms": _ms(
            "benchmark=True 之后的前向 GPU 忙碌时间 (ms)",
            "forward after benchmark=True: GPU busy (ms)",
        ),
        "wgrad_ms": _ms(
            "滤波器梯度 GPU 忙碌时间 (ms)", "filter gradient: GPU busy (ms)"
        ),
    },
    zh={
        FORWARD: "前向（fp32）",
        FORWARD_TF32: "前向（TF32）",
        FORWARD_TUNED: "前向，benchmark=True（fp32）",
        DGRAD: "输入梯度（fp32）",
        WGRAD: "滤波器梯度（fp32）",
        "time (ms) from the first operation": "从第一个操作起的时间 (ms)",
    },
)
