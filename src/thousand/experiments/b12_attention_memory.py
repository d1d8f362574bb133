"""B12: the attention memory wall, in bytes. The same causal attention as
b12-attention-time (B = 4, 32 heads, d = 128, T = 512 .. 16,384): how much device
memory each way needs beyond its inputs q, k, v and its output o.

Our kernels keep what they allocate (the unfused rung's score buffer, the lse
scratch) for the next call, so one call after those caches are emptied shows its
need as the drop in the GPU's free memory (cuMemGetInfo; allocations come in 2 MiB
pages). PyTorch's caching allocator reports its own peak; the output tensor it
allocates is taken off, since ours write into an `out` made beforehand.
"""

from __future__ import annotations

from thousand.cuda import driver, on_cpu, synchronize
from thousand.experiments import Experiment, Note
from thousand.experiments.b12_attention_time import (
    FUSED,
    FUSED16,
    LENGTHS,
    NAIVE,
    QUICK,
    SERIES,
    TORCH16,
    TORCH32,
    B,
    D,
    H,
    inputs,
    release,
    ways,
)
from thousand.kernels import layer_launch

GIB = 2**30


def _ours_bytes(call) -> int:
    """Free device memory before, minus after, one call (caches emptied first)."""
    release()
    layer_launch._scratch.clear()
    synchronize()
    before = driver().mem_get_info()[0]
    call()
    synchronize()
    return before - driver().mem_get_info()[0]


def _torch_bytes(call, out_bytes: int) -> int:
    import torch

    release()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    o = call()
    torch.cuda.synchronize()
    need = torch.cuda.max_memory_allocated() - base - out_bytes
    del o
    return need


def run(quick: bool) -> dict:
    if quick or on_cpu():  # the CPU backend's device memory is host memory
        b, h, d, lengths = QUICK["B"], QUICK["H"], QUICK["D"], QUICK["lengths"]
    else:
        b, h, d, lengths = B, H, D, LENGTHS
    series = {name: [] for name in SERIES}
    for T in lengths:
        found = ways(inputs(T, b, h, d))
        for name in SERIES:
            gib = None
            if name in found and not on_cpu():
                try:
                    if name in (TORCH32, TORCH16):
                        item = 4 if name == TORCH32 else 2
                        used = _torch_bytes(found[name](), item * b * h * T * d)
                    else:
                        used = _ours_bytes(found[name]())
                    gib = used / GIB
                except MemoryError:  # the unfused rung's scores do not fit
                    gib = None
                release()
            series[name].append(gib)
    if on_cpu():  # nothing measured: say what the scores would take instead
        series[NAIVE] = [b * h * T * T * 4 / GIB for T in lengths]
    i = lengths.index(4096) if 4096 in lengths else len(lengths) - 1
    ran = [T for T, g in zip(lengths, series[NAIVE], strict=True) if g is not None]
    wall = next((T for T in lengths if T > max(ran)), 2 * lengths[-1])
    return {
        "kind": "lines",
        "x": {"label": "T (tokens)", "values": lengths, "log": True},
        "y": {"label": "GiB beyond q, k, v, o", "log": True, "format": "{:,.3g}"},
        "series": series,
        "notes": {
            "naive_gib": series[NAIVE][i] or 0.0,
            "fused_mib": (series[FUSED][i] or 0.0) * 1024,
            "bf16_mib": (series[FUSED16][i] or 0.0) * 1024,
            "wall_T": wall,
            "wall_gib": b * h * wall * wall * 4 / GIB,
            "total_gib": (driver().mem_get_info()[1] if not on_cpu() else 0) / GIB,
            "at_T": lengths[i],
        },
    }


EXPERIMENT = Experiment(
    name="b12-attention-memory",
    title={
        "zh": "因果注意力在 q、k、v、o 之外占用的显存（B=4，32 个头，d=128）",
        "en": "Device memory causal attention needs beyond q, k, v and o (B=4, 32 "
        "heads, d=128)",
    },
    run=run,
    families=("attention", "attention_bf16", "matmul", "softmax", "transpose"),
    notes={
        "naive_gib": Note(
            "未融合版本的分数矩阵（GiB）", "The unfused rung's scores (GiB)", "{:,.1f}"
        ),
        "fused_mib": Note(
            "融合 float32 额外占用（MiB）", "Fused float32's extra (MiB)", "{:,.0f}"
        ),
        "bf16_mib": Note(
            "融合 bf16 额外占用（MiB）", "Fused bf16's extra (MiB)", "{:,.0f}"
        ),
        "wall_T": Note(
            "未融合版本第一个放不下的 T",
            "First T whose scores the unfused rung could not hold",
            "{:,.0f}",
        ),
        "wall_gib": Note(
            "那个 T 的分数矩阵需要（GiB）",
            "What the scores need at that T (GiB)",
            "{:,.0f}",
        ),
        "total_gib": Note(
            "这块 GPU 的显存总量（GiB）", "This GPU's memory in all (GiB)", "{:,.0f}"
        ),
        "at_T": Note("以上占用所在的 T", "The T these figures are taken at", "{:,.0f}"),
    },
    zh={
        "T (tokens)": "T（词元数）",
        "GiB beyond q, k, v, o": "q、k、v、o 之外的 GiB",
        NAIVE: "未融合 float32（v1）",
        FUSED: "融合 float32（v2）",
        TORCH32: "PyTorch SDPA float32",
        FUSED16: "融合 bf16，张量核心（v2）",
        TORCH16: "PyTorch SDPA bf16",
    },
)
