"""A14: a GPT-style Transformer on the kernels learns to reverse ten digits: the
training loss and the held-out exact match along the steps, the time per step
against its PyTorch twin, and what each head attends to on one held-out sequence
(its attention weights, query by key, as pictures)."""

from __future__ import annotations

from thousand.experiments import Experiment, Note
from thousand.models import train as T
from thousand.models import transformer as TF

FAMILIES = (
    "embedding",
    "embedding_backward",
    "layer_norm",
    "layer_norm_backward",
    "matmul",
    "bias_add",
    "transpose",
    "col_sum",
    "split_heads",
    "merge_heads",
    "attention",
    "attention_backward",
    "matrix_add",
    "gelu",
    "gelu_backward",
    "cross_entropy",
    "cross_entropy_backward",
    "adamw",
)


def run(quick: bool) -> dict:
    r = T.train_transformer(seed=0, quick=quick, log=lambda *_: None)
    c = r["curve"]
    idx = r["test"][0][:1]  # the first held-out sequence
    maps = TF.attention_maps(r["trainer"], idx)[:, 0]  # (n_layer, H, T, T)
    n_layer, H, Tn, _ = maps.shape
    return {
        "kind": "lines",
        "x": {"label": "step", "values": c["step"], "log": False},
        "y": {"label": "loss, exact match", "log": False, "format": "{:.4f}"},
        "series": {
            "training loss": c["loss"],
            "held-out exact match": c["accuracy"],
        },
        "notes": {
            "seed": r["seed"],
            "accuracy": 100 * r["accuracy"],
            "twin_accuracy": 100 * r["twin_accuracy"],
            "kernel_step_ms": 1e3 * r["kernel_seconds"] / r["steps"],
            "twin_step_ms": 1e3 * r["twin_seconds"] / r["twin_steps"],
            "ratio": (r["kernel_seconds"] / r["steps"])
            / (r["twin_seconds"] / r["twin_steps"]),
        },
        "images": {
            "label": f"what each head attends to ({n_layer} x {H} heads, block by "
            f"block) on {' '.join('|' if t == 10 else str(t) for t in idx[0])}: "
            "query down, key across",
            "shape": [Tn, Tn],
            "values": maps.reshape(n_layer * H, Tn * Tn).tolist(),
        },
    }


EXPERIMENT = Experiment(
    name="a14-transformer-reverse",
    title={
        "zh": "GPT 式 Transformer 学会倒序数字：训练曲线与注意力图（全部由核函数完成）",
        "en": "A GPT-style Transformer learns to reverse digits, on the kernels",
    },
    run=run,
    families=FAMILIES,
    notes={
        "seed": Note(
            "随机种子（初始权重与批次）", "seed (initial weights, batches)", "{:.0f}"
        ),
        "accuracy": Note(
            "留出集完全正确率，核函数版 (%)", "held-out exact match, kernels (%)"
        ),
        "twin_accuracy": Note(
            "留出集完全正确率，PyTorch 版 (%)", "held-out exact match, PyTorch twin (%)"
        ),
        "kernel_step_ms": Note(
            "每步训练时间，核函数版 (ms)", "time per training step, kernels (ms)"
        ),
        "twin_step_ms": Note(
            "每步训练时间，PyTorch 版 (ms)", "time per training step, PyTorch (ms)"
        ),
        "ratio": Note("时间比：核函数版 / PyTorch", "time ratio, kernels / PyTorch"),
    },
    zh={
        "step": "训练步数",
        "loss, exact match": "损失、完全正确率",
        "training loss": "训练损失",
        "held-out exact match": "留出集完全正确率",
    },
)
