"""A11: identity against projection shortcuts (He et al. 2015, table 3's options
B and C) in ResNet-20 on the digits (a11_degradation's setting). B: the identity,
with a 1 x 1 convolution and batch norm only where the shape changes (two
blocks); C: that projection in every block. Training and held-out error after
each epoch, the parameters each adds, and what they cost per epoch."""

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

ARMS = {  # key: (name, Chinese, option)
    "identity": ("identity shortcuts (B)", "恒等捷径 (B)", "B"),
    "projection": ("projection shortcuts (C)", "投影捷径 (C)", "C"),
}


def run(quick: bool) -> dict:
    series, notes = {}, {}
    for key, (name, _, option) in ARMS.items():
        r, spec = train(quick, 3, shortcut=option)
        series[f"training, {name}"] = errors(r["train_acc"])
        series[f"held-out, {name}"] = errors(r["test_acc"])
        notes.update(summary(key, r, spec))
    epochs = len(next(iter(series.values())))
    return {
        "kind": "lines",
        "x": {"label": "epoch", "values": list(range(1, epochs + 1)), "log": False},
        "y": {"label": "error (%)", "log": False, "format": "{:.2f}"},
        "series": series,
        "notes": notes,
    }


NOTES = {}
ZH = {"epoch": "轮次 (epoch)", "error (%)": "误差 (%)"}
for _key, (_name, _zh, _) in ARMS.items():
    NOTES.update(summary_notes(_key, f"ResNet-20, {_name}", f"ResNet-20，{_zh}"))
    ZH[f"training, {_name}"] = f"训练集，{_zh}"
    ZH[f"held-out, {_name}"] = f"留出集，{_zh}"

EXPERIMENT = Experiment(
    name="a11-shortcuts",
    title={
        "zh": "恒等捷径与投影捷径：ResNet-20 的训练与留出集误差",
        "en": "Identity against projection shortcuts: ResNet-20's training and "
        "held-out error",
    },
    run=run,
    families=FAMILIES,
    files=FILES,
    notes=NOTES,
    zh=ZH,
)
