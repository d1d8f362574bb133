"""A13: one training iteration of the DCGAN (the discriminator's step, then the
generator's) on the kernels against its PyTorch twin (float32, TF32 off), same
weights, same batch, same noise; and where the kernels' time goes, family by
family (each launch between two CUDA events), the host's share shown as the GPU
idling between launches."""

from __future__ import annotations

import time

import numpy as np

from thousand.cuda import KernelTimes
from thousand.experiments import Experiment, Note, require_gpu
from thousand.models import gan
from thousand.models.data import digits

# families -> the bar they are counted in (the rest: "other kernels")
BARS = {
    "conv_backward_data": "transposed conv (B11 input grad)",
    "conv": "conv",
    "conv_backward_filter": "conv filter grad",
    "matmul": "matmul",
    "transpose": "transpose",
    "adamw": "Adam",
}
ORDER = [*dict.fromkeys(BARS.values()), "other kernels", "GPU idle"]
WINDOWS, STEPS = 7, 20


def seconds_per_step(model, batches) -> float:
    """The median over WINDOWS runs of STEPS iterations, after five of warm-up."""

    def window():
        start = time.perf_counter()
        for real, z1, z2 in batches[:STEPS]:
            model.d_step(real, z1)
            model.g_step(z2)
        model.sync()
        return (time.perf_counter() - start) / STEPS

    for real, z1, z2 in batches[:5]:
        model.d_step(real, z1)
        model.g_step(z2)
    return float(np.median([window() for _ in range(WINDOWS)]))


def run(quick: bool) -> dict:
    require_gpu(EXPERIMENT)
    import torch

    from thousand.models import gan_twin

    cfg = gan.DIGITS
    real = digits()[0] * 2 - 1
    rng = np.random.default_rng(0)
    batches = [
        (
            real[rng.integers(0, len(real), cfg.batch)],
            gan.noise(rng, cfg.batch, cfg.z),
            gan.noise(rng, cfg.batch, cfg.z),
        )
        for _ in range(STEPS)
    ]
    p = gan.init(cfg, 0)
    ours = gan.GAN(cfg, p)
    ours_s = seconds_per_step(ours, batches)
    with KernelTimes() as kt:  # one more iteration, every launch timed
        start = time.perf_counter()
        ours.d_step(*batches[0][:2])
        ours.g_step(batches[0][2])
        ours.sync()
        wall_ms = 1e3 * (time.perf_counter() - start)

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    twin = gan_twin.GAN(cfg, p, device="cuda")
    twin_s = seconds_per_step(twin, batches)

    bars = dict.fromkeys(ORDER, 0.0)
    for family, (_, ms) in kt.by_family().items():
        bars[BARS.get(family, "other kernels")] += ms
    kernel_ms = sum(ms for _, _, ms in kt.launches)
    bars["GPU idle"] = max(0.0, wall_ms - kernel_ms)
    return {
        "kind": "bars",
        "x": {"label": "kernels", "values": ORDER},
        "y": {"label": "ms in one iteration (D step + G step)", "format": "{:.3f}"},
        "series": {"ms in one iteration (D step + G step)": [bars[k] for k in ORDER]},
        "notes": {
            "ours_ms": 1e3 * ours_s,
            "twin_ms": 1e3 * twin_s,
            "ratio": twin_s / ours_s,
            "launches": len(kt.launches),
            "kernel_ms": kernel_ms,
            "wall_ms": wall_ms,
            "tconv_share": 100 * bars[BARS["conv_backward_data"]] / kernel_ms,
        },
    }


EXPERIMENT = Experiment(
    name="a13-step-time",
    title={
        "zh": "DCGAN 的一次训练迭代：时间花在哪些核函数上",
        "en": "One DCGAN iteration: where the time goes",
    },
    run=run,
    families=gan.FAMILIES,
    files=gan.FILES,
    gpu_only="it times the GPU against PyTorch on the GPU; emulated times say "
    "nothing about either",
    notes={
        "ours_ms": Note(
            "每次迭代时间，核函数版 (ms)", "time per iteration, kernels (ms)"
        ),
        "twin_ms": Note(
            "每次迭代时间，PyTorch eager (ms)", "time per iteration, PyTorch eager (ms)"
        ),
        "ratio": Note(
            "速度之比：核函数版 / PyTorch", "speed ratio, kernels / PyTorch", "{:.2f}"
        ),
        "launches": Note(
            "每次迭代核函数启动次数", "kernel launches per iteration", "{:.0f}"
        ),
        "kernel_ms": Note("各核函数时间之和 (ms)", "sum of the kernels' times (ms)"),
        "wall_ms": Note(
            "计时那次迭代的墙钟时间 (ms)", "wall time of the timed iteration (ms)"
        ),
        "tconv_share": Note(
            "转置卷积占核函数时间的比例 (%)",
            "transposed convolutions' share of kernel time (%)",
            "{:.1f}",
        ),
    },
    zh={
        "kernels": "核函数",
        "ms in one iteration (D step + G step)": (
            "一次迭代（D 一步 + G 一步）中的毫秒数"
        ),
        "transposed conv (B11 input grad)": "转置卷积（B11 的输入梯度）",
        "conv": "卷积",
        "conv filter grad": "卷积核梯度",
        "matmul": "矩阵乘法",
        "transpose": "转置",
        "Adam": "Adam",
        "other kernels": "其他核函数",
        "GPU idle": "GPU 空闲",
    },
)
