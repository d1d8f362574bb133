"""B12: the attention memory wall, in time. Causal self-attention, B = 4 sequences
of 32 heads of d = 128, for T = 512 .. 16,384: the unfused float32 rung (every
head's T x T scores in device memory), the fused float32 rung, PyTorch's
scaled_dot_product_attention in float32, the fused bf16 rung on tensor cores and
PyTorch's in bf16. All five compute the same thing on the same inputs (the bf16
pair on those inputs rounded to bf16); each time is a CUDA-event median.

Where the unfused rung's scores do not fit in device memory it raises MemoryError
and its point is missing: that is the wall the page talks about. b12-attention-memory
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


def inputs(T: int, b: int, h: int, d: int):
    """q, k, v as float32 device arrays, and as host arrays for the bf16 copies."""
    rng = np.random.default_rng(T)
    host = [rng.standard_normal((b, h, T, d), dtype=np.float32) for _ in range(3)]
    return host, [to_device(a) for a in host]


def torch_tensors(host, dtype):
    """The same values as CUDA tensors (bf16: rounded as ml_dtypes rounds), or
    None when PyTorch with CUDA is not here."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available() or on_cpu():
        return None
    from thousand.bench.baselines import as_torch

    if dtype == "bf16":
        return [as_torch(a.astype(BF16)) for a in host]
    return [as_torch(a) for a in host]


def sdpa(tensors):
    import torch

    return lambda: torch.nn.functional.scaled_dot_product_attention(
        *tensors, is_causal=CAUSAL
    )


def ways(host, dev):
    """name -> a no-argument call, for each way this machine can run."""
    out = to_device(np.empty_like(host[0]))
    found = {
        NAIVE: lambda: attention(*dev, CAUSAL, out=out, version=1),
        FUSED: lambda: attention(*dev, CAUSAL, out=out, version=2),
    }
    t32 = torch_tensors(host, "f32")
    if t32 is not None:
        found[TORCH32] = sdpa(t32)
        d16 = [to_device(a.astype(BF16)) for a in host]
        o16 = to_device(np.empty(host[0].shape, BF16))
        found[FUSED16] = lambda: attention_bf16(*d16, CAUSAL, out=o16, version=2)
        found[TORCH16] = sdpa(torch_tensors(host, "bf16"))
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
        host, dev = inputs(T, b, h, d)
        found = ways(host, dev)
        for name in SERIES:
            ms = None
            if name in found:
                try:
                    ms = median(
                        time_ms(found[name], warmup=1, repeat=3 if quick else 5)
                    )
                except MemoryError:  # the scores do not fit: the wall
                    ms = None
            series[name].append(ms)
        del found, dev
        release()
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
