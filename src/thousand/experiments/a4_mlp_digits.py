"""A4: the MLP trained on the digits by backpropagation on the kernels: the
training loss and held-out accuracy after each epoch, and the training time
against the same model in NumPy on the CPU."""

from __future__ import annotations

from thousand.experiments import Experiment, Note
from thousand.models import train as T

FAMILIES = (
    "matmul",
    "transpose",
    "bias_relu",
    "bias_add",
    "relu_backward",
    "col_sum",
    "softmax_xent",
    "sgd",
)


def run(quick: bool) -> dict:
    r = T.train("mlp", seed=0, epochs=2 if quick else None, log=lambda *_: None)
    return curve_result(r)


def curve_result(r: dict) -> dict:
    c = r["curve"]
    return {
        "kind": "lines",
        "x": {"label": "epoch", "values": c["epoch"], "log": False},
        "y": {"label": "loss, accuracy", "log": False, "format": "{:.4f}"},
        "series": {"training loss": c["loss"], "held-out accuracy": c["accuracy"]},
        "notes": {
            "seed": r["seed"],
            "accuracy": 100 * r["accuracy"],
            "numpy_accuracy": 100 * r["numpy_accuracy"],
            "kernel_epoch_s": r["kernel_seconds"] / r["epochs"],
            "numpy_epoch_s": r["numpy_seconds"] / r["numpy_epochs"],
            "ratio": T.time_ratio(r),
        },
    }


NOTES = {
    "seed": Note(
        "随机种子（初始权重与批次顺序）",
        "seed (initial weights, batch order)",
        "{:.0f}",
    ),
    "accuracy": Note("留出集准确率，核函数版 (%)", "held-out accuracy, kernels (%)"),
    "numpy_accuracy": Note(
        "留出集准确率，NumPy 版 (%)", "held-out accuracy, NumPy twin (%)"
    ),
    "kernel_epoch_s": Note(
        "每轮训练时间，核函数版 (s)", "training time per epoch, kernels (s)", "{:.4f}"
    ),
    "numpy_epoch_s": Note(
        "每轮训练时间，NumPy 在 CPU 上 (s)",
        "training time per epoch, NumPy on the CPU (s)",
        "{:.4f}",
    ),
    "ratio": Note("时间比：核函数版 / NumPy", "time ratio, kernels / NumPy"),
}
ZH = {
    "epoch": "轮次 (epoch)",
    "loss, accuracy": "损失、准确率",
    "training loss": "训练损失",
    "held-out accuracy": "留出集准确率",
}

EXPERIMENT = Experiment(
    name="a4-mlp-digits",
    title={
        "zh": "MLP 在 digits 上的训练曲线（反向传播全部由核函数完成）",
        "en": "The MLP learning the digits, backpropagation on the kernels",
    },
    run=run,
    families=FAMILIES,
    notes=NOTES,
    zh=ZH,
)
