"""A11: batch norm (Ioffe & Szegedy 2015) with and without, in ResNet-20 on the
digits (a11_degradation's setting). Without it each convolution gets a bias, as
before batch norm; trained at the same learning rate 0.1, and at a tenth of it
(batch norm's claim is that it lets a network train at rates that would otherwise
diverge). The training error after each epoch, in evaluation mode; a run whose
loss is no longer finite stays in the table at the error it shows."""

from __future__ import annotations

from thousand.experiments import Experiment
from thousand.experiments.a11_degradation import (
    FAMILIES,
    FILES,
    errors,
    summary,
    summary_notes,
    train,
)

ARMS = {  # key: (name, Chinese, batch norm, learning rate)
    "bn": ("batch norm, lr 0.1", "有批归一化，学习率 0.1", True, 0.1),
    "none": ("no batch norm, lr 0.1", "无批归一化，学习率 0.1", False, 0.1),
    "none_slow": ("no batch norm, lr 0.01", "无批归一化，学习率 0.01", False, 0.01),
}


def run(quick: bool) -> dict:
    series, notes = {}, {}
    for key, (name, _, bn, lr) in ARMS.items():
        r, spec = train(quick, 3, batch_norm=bn, lr=lr)
        series[name] = errors(r["train_acc"])
        notes.update(summary(key, r, spec))
    epochs = len(next(iter(series.values())))
    return {
        "kind": "lines",
        "x": {"label": "epoch", "values": list(range(1, epochs + 1)), "log": False},
        "y": {"label": "training error (%)", "log": False, "format": "{:.2f}"},
        "series": series,
        "notes": notes,
    }


NOTES = {}
for _key, (_name, _zh, _, _) in ARMS.items():
    NOTES.update(summary_notes(_key, f"ResNet-20, {_name}", f"ResNet-20，{_zh}"))

EXPERIMENT = Experiment(
    name="a11-batch-norm",
    title={
        "zh": "批归一化的有无：ResNet-20 的训练误差",
        "en": "Batch norm with and without: ResNet-20's training error",
    },
    run=run,
    families=FAMILIES,
    files=FILES,
    notes=NOTES,
    zh={
        "epoch": "轮次 (epoch)",
        "training error (%)": "训练误差 (%)",
        **{name: zh for name, zh, _, _ in ARMS.values()},
    },
)
