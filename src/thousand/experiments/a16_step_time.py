"""A16: where one training step of the "large" GPT spends the device's time,
kernel by kernel (each launch between two CUDA events), and the step's speed in
tokens per second against the same model in PyTorch eager, float32 (TF32 off),
on the same batch; the device memory each holds."""

from __future__ import annotations

import time

import numpy as np

from thousand.cuda import KernelTimes, on_cpu
from thousand.experiments import Experiment, Note
from thousand.models import gpt

SIZE = "large"
# families -> the bar they are counted in (the rest: "other kernels")
BARS = {
    "matmul": "matmul",
    "transpose": "transpose",
    "attention": "attention",
    "attention_backward": "attention bwd",
    "layer_norm": "layer norm",
    "layer_norm_backward": "layer norm",
    "cross_entropy": "cross-entropy",
    "cross_entropy_backward": "cross-entropy",
    "adamw": "AdamW",
}
ORDER = [*dict.fromkeys(BARS.values()), "other kernels", "GPU idle"]


def seconds_per_step(trainer, batch, windows: int, steps: int) -> float:
    """The median over `windows` runs of `steps` steps, after five steps of
    warm-up: the first steps of a process compile, allocate and find the GPU's
    clocks low, and a single window swings by a third from run to run."""
    for _ in range(5):
        trainer.step(batch, 1e-4)
    return float(
        np.median([gpt.time_steps(trainer, batch, steps) for _ in range(windows)])
    )


def run(quick: bool) -> dict:
    import torch

    from thousand.models import gpt_twin

    cfg = gpt.QUICK if quick else gpt.SIZES[SIZE]
    B, windows, steps = (2, 1, 2) if quick else (gpt.PRETRAIN["batch"], 7, 10)
    rng = np.random.default_rng(0)
    batch = gpt.lm_batch(gpt.tokens("train"), rng, B, cfg.block_size)
    p = gpt.init(cfg, 0)

    before = gpt.device_bytes_in_use()
    ours = gpt.Trainer(cfg, p)
    ours_s = seconds_per_step(ours, batch, windows, steps)
    ours_bytes = gpt.device_bytes_in_use() - before  # buffers persist: the peak
    with KernelTimes() as kt:  # one more step, every launch timed
        start = time.perf_counter()
        ours.step(batch, 1e-4)
        ours.sync()
        wall_ms = 1e3 * (time.perf_counter() - start)
    del ours

    cuda = torch.cuda.is_available() and not on_cpu()
    torch.backends.cuda.matmul.allow_tf32 = False
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    twin = gpt_twin.Trainer(cfg, p, device="cuda" if cuda else "cpu")
    twin_s = seconds_per_step(twin, batch, windows, steps)
    twin_bytes = torch.cuda.max_memory_allocated() if cuda else 0

    bars = dict.fromkeys(ORDER, 0.0)
    for family, (_, ms) in kt.by_family().items():
        bars[BARS.get(family, "other kernels")] += ms
    kernel_ms = sum(ms for _, _, ms in kt.launches)
    bars["GPU idle"] = max(0.0, wall_ms - kernel_ms)
    tokens = B * cfg.block_size
    return {
        "kind": "bars",
        "x": {"label": "kernels", "values": ORDER},
        "y": {"label": "ms in one training step", "format": "{:.2f}"},
        "series": {"ms in one training step": [bars[k] for k in ORDER]},
        "notes": {
            "ours_tokens_s": tokens / ours_s,
            "twin_tokens_s": tokens / twin_s,
            "ratio": twin_s / ours_s,
            "ours_ms": 1e3 * ours_s,
            "twin_ms": 1e3 * twin_s,
            "ours_mib": ours_bytes / 2**20,
            "twin_mib": twin_bytes / 2**20,
            "launches": len(kt.launches),
            "kernel_ms": kernel_ms,
            "wall_ms": wall_ms,
        },
    }


EXPERIMENT = Experiment(
    name="a16-step-time",
    title={
        "zh": "“large” GPT 的一个训练步：时间花在哪些核函数上",
        "en": 'One training step of the "large" GPT: where the time goes',
    },
    run=run,
    families=gpt.FAMILIES,
    files=gpt.FILES,
    notes={
        "ours_tokens_s": Note(
            "吞吐量，核函数版（词元/秒）", "throughput, kernels (tokens/s)", "{:,.0f}"
        ),
        "twin_tokens_s": Note(
            "吞吐量，PyTorch eager（词元/秒）",
            "throughput, PyTorch eager (tokens/s)",
            "{:,.0f}",
        ),
        "ratio": Note(
            "吞吐量之比：核函数版 / PyTorch",
            "throughput ratio, kernels / PyTorch",
            "{:.2f}",
        ),
        "ours_ms": Note("每步时间，核函数版 (ms)", "time per step, kernels (ms)"),
        "twin_ms": Note("每步时间，PyTorch (ms)", "time per step, PyTorch (ms)"),
        "ours_mib": Note(
            "显存占用，核函数版 (MiB)", "device memory, kernels (MiB)", "{:,.0f}"
        ),
        "twin_mib": Note(
            "显存峰值，PyTorch (MiB)", "peak device memory, PyTorch (MiB)", "{:,.0f}"
        ),
        "launches": Note("每步核函数启动次数", "kernel launches per step", "{:.0f}"),
        "kernel_ms": Note("各核函数时间之和 (ms)", "sum of the kernels' times (ms)"),
        "wall_ms": Note(
            "计时那一步的墙钟时间 (ms)", "wall time of the timed step (ms)"
        ),
    },
    zh={
        "kernels": "核函数",
        "ms in one training step": "一个训练步中的毫秒数",
        "matmul": "矩阵乘法",
        "transpose": "转置",
        "attention": "注意力前向",
        "attention bwd": "注意力反向",
        "layer norm": "层归一化",
        "cross-entropy": "交叉熵",
        "AdamW": "AdamW",
        "other kernels": "其他核函数",
        "GPU idle": "GPU 空闲",
    },
)
