"""B12: the attention memory wall, in time. Causal self-attention, B = 4 sequences
of 32 heads of d = 128, for T = 512 .. 16,384: the unfused float32 rung (every
head's T x T scores in device memory), the fused float32 rung, PyTorch's
scaled_dot_product_attention in float32, the fused bf16 rung on tensor cores and
PyTorch's in bf16. All five compute the same thing on the same inputs (the bf16
pair on those inputs rounded to bf16); each time is a CUDA-event median.

Each way runs with only its own q, k, v and o on the device. Where the unfused
rung's scores do not fit beside them it raises MemoryError and its point is
missing: that is the wall the page talks about. b12-attention-memory
measures the bytes.
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import median, on_cpu, time_ms, to_device
from thousand.experiments import Experiment, Note
from thousand.kernels import attention as A32
from thousand.kernels.attention import attention
from thousand.kernels.attention_bf16 import BF16, attention_bf16

B, H, D = 4, 32, 128
LENGTHS = [512, 1024, 2048, 4096, 8192, 16384]
QUICK = dict(B=1, H=2, D=16, lengths=[16, 32])  # the CPU backend: float32 rungs only
CAUSAL = True  # what a GPT runs

NAIVE = "unfused float32 (v1)"
FUSED = "fused float32 (v2)"
TORCH32 = "PyTorch SDPA float32"
FUSED16 = "fused bf16, tensor cores (v2)"
TORCH16 = "PyTorch SDPA bf16"
SERIES = (NAIVE, FUSED, TORCH32, FUSED16, TORCH16)


def inputs(T: int, b: int, h: int, d: int) -> list:
    """q, k, v on the host, float32, uniform in [-2, 2) (a few times faster to draw
    than normal values: 6 GiB of them at T = 16,384); each way copies them to the
    device itself."""
    rng = np.random.default_rng(T)
    return [rng.random((b, h, T, d), dtype=np.float32) * 4 - 2 for _ in range(3)]


def torch_here() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available() and not on_cpu()


def _ours(host, dtype, version, fn):
    """A call of one of our rungs on its own device copies of q, k, v and o."""
    dev = [to_device(a.astype(dtype)) for a in host]
    out = to_device(np.empty(host[0].shape, dtype))
    return lambda: fn(*dev, CAUSAL, out=out, version=version)


def _sdpa(host, bf16: bool):
    import torch

    from thousand.bench.baselines import as_torch

    t = [as_torch(a.astype(BF16) if bf16 else a) for a in host]
    return lambda: torch.nn.functional.scaled_dot_product_attention(
        *t, is_causal=CAUSAL
    )


def ways(host) -> dict:
    """name -> a builder that puts that way's inputs on the device and returns a
    no-argument call. One way's arrays at a time: the unfused rung meets the wall
    with only its own q, k, v and o beside the scores."""
    found = {
        NAIVE: lambda: _ours(host, np.float32, 1, attention),
        FUSED: lambda: _ours(host, np.float32, 2, attention),
    }
    if torch_here():
        found[TORCH32] = lambda: _sdpa(host, bf16=False)
        found[FUSED16] = lambda: _ours(host, BF16, 2, attention_bf16)
        found[TORCH16] = lambda: _sdpa(host, bf16=True)
    return found


def release():
    """Give back what the unfused rung and PyTorch's allocator keep between calls,
    so the next length starts from the same free memory."""
    A32._SCORES.clear()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:
        pass


def run(quick: bool) -> dict:
    b, h, d = (QUICK["B"], QUICK["H"], QUICK["D"]) if quick else (B, H, D)
    lengths = QUICK["lengths"] if quick else LENGTHS
    series = {name: [] for name in SERIES}
    for T in lengths:
        found = ways(inputs(T, b, h, d))
        for name in SERIES:
            ms = None
            if name in found:
                try:
                    call = found[name]()
                    # the unfused rung's loop over heads queues hundreds of
                    # launches from Python: that host time is part of its cost,
                    # so no hold kernel hides it (for one launch it is nothing)
                    ms = median(time_ms(call, warmup=1, repeat=3, hold=False))
                except MemoryError:  # the scores do not fit: the wall
                    ms = None
                call = None  # its device arrays go before the next way's come
                release()
            series[name].append(ms)
    i = lengths.index(4096) if 4096 in lengths else len(lengths) - 1
    ran = [T for T, ms in zip(lengths, series[NAIVE], strict=True) if ms is not None]

    def ratio(a, b_):
        x, y = series[a][i], series[b_][i]
        return x / y if x is not None and y is not None else 0.0

    return {
        "kind": "lines",
        "x": {"label": "T (tokens)", "values": lengths, "log": True},
        "y": {"label": "ms", "log": True, "format": "{:,.3g}"},
        "series": series,
        "notes": {
            "naive_largest_T": max(ran),
            "fused_vs_naive": ratio(NAIVE, FUSED),
            "fused_vs_torch32": ratio(TORCH32, FUSED),
            "bf16_vs_torch16": ratio(TORCH16, FUSED16),
            "bf16_vs_fused32": ratio(FUSED, FUSED16),
            "at_T": lengths[i],
        },
    }


EXPERIMENT = Experiment(
    name="b12-attention-time",
    title={
        "zh": "因果注意力的耗时：未融合、融合 float32、融合 bf16 与 PyTorch"
        "（B=4，32 个头，d=128）",
        "en": "Causal attention time: unfused, fused float32, fused bf16 and PyTorch "
        "(B=4, 32 heads, d=128)",
    },
    run=run,
    families=("attention", "attention_bf16", "matmul", "softmax", "transpose"),
    notes={
        "naive_largest_T": Note(
            "未融合版本还放得下分数矩阵的最大 T",
            "Largest T whose scores the unfused rung could hold",
            "{:,.0f}",
        ),
        "fused_vs_naive": Note(
            "融合 float32 比未融合快（倍）",
            "Fused float32 over unfused (times faster)",
            "{:,.1f}×",
        ),
        "fused_vs_torch32": Note(
            "融合 float32 的速度是 PyTorch float32 的",
            "Fused float32's speed as a share of PyTorch float32's",
            "{:.0%}",
        ),
        "bf16_vs_torch16": Note(
            "融合 bf16 的速度是 PyTorch bf16 的",
            "Fused bf16's speed as a share of PyTorch bf16's",
            "{:.0%}",
        ),
        "bf16_vs_fused32": Note(
            "张量核心 bf16 比 CUDA 核心 float32 快（倍）",
            "bf16 on tensor cores over float32 on CUDA cores (times faster)",
            "{:,.1f}×",
        ),
        "at_T": Note("以上比值所在的 T", "The T these ratios are taken at", "{:,.0f}"),
    },
    zh={
        "T (tokens)": "T（词元数）",
        "ms": "毫秒",
        NAIVE: "未融合 float32（v1）",
        FUSED: "融合 float32（v2）",
        TORCH32: "PyTorch SDPA float32",
        FUSED16: "融合 bf16，张量核心（v2）",
        TORCH16: "PyTorch SDPA bf16",
    },
)
