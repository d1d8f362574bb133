"""A10: what dropout and data augmentation do to the gap between training and
held-out accuracy. The small AlexNet-style network (ReLU) on the digits (32 x 32)
three ways, from the same weights on the same batches: no dropout; dropout 0.5 in
the two hidden dense layers (Krizhevsky et al. 2012, sec. 4.2); and dropout with
each training image shifted by up to 3 pixels either way (one pixel of the 8 x 8
digit; the paper cropped and mirrored, but a mirrored digit is another digit).
The accuracies are measured after each epoch in evaluation mode (no dropout, no
shift), on the training images and on the held-out ones."""

from __future__ import annotations

from thousand.experiments import Experiment, Note
from thousand.experiments.a10_relu_tanh import FAMILIES, FILES
from thousand.models import deep_cnns as D

SETTINGS = {"batch": 64, "lr": 0.05, "seed": 0}
EPOCHS, SHIFT = 30, 3
ARMS = {  # key: (name, dropout, shift in pixels)
    "plain": ("no dropout", 0.0, 0),
    "dropout": ("dropout", 0.5, 0),
    "augmented": ("dropout + shifts", 0.5, SHIFT),
}


def run(quick: bool) -> dict:
    size, width, hidden = (16, 2, 16) if quick else (32, 32, 256)
    X_train, X_test, y_train, y_test = D.digit_images(size)
    settings, epochs = dict(SETTINGS), EPOCHS
    if quick:  # a check that the code runs: 64 images in batches of 16
        X_train, y_train, X_test, y_test = (
            X_train[:64],
            y_train[:64],
            X_test[:32],
            y_test[:32],
        )
        settings["batch"], epochs = 16, 1
    series, notes = {}, {}
    for key, (name, p, shift) in ARMS.items():
        spec = D.alexnet(0, width, size, "relu", dropout=p, hidden=hidden)
        net = D.network(spec, settings["batch"])
        r = D.curves(
            net, X_train, y_train, X_test, y_test, epochs, augment=shift, **settings
        )
        series[f"training, {name}"] = [100 * a for a in r["train_acc"]]
        series[f"held-out, {name}"] = [100 * a for a in r["test_acc"]]
        train, test = 100 * r["train_acc"][-1], 100 * r["test_acc"][-1]
        best = 100 * max(r["test_acc"])
        notes.update(
            {
                f"{key}_train": train,
                f"{key}_test": test,
                f"{key}_gap": train - test,
                f"{key}_best_test": best,
                f"{key}_epoch_ms": 1e3 * D.steady(r["seconds"]),
            }
        )
    return {
        "kind": "lines",
        "x": {"label": "epoch", "values": list(range(1, epochs + 1)), "log": False},
        "y": {"label": "accuracy (%)", "log": False, "format": "{:.2f}"},
        "series": series,
        "notes": notes,
    }


ZH_ARM = {
    "no dropout": "无 dropout",
    "dropout": "dropout",
    "dropout + shifts": "dropout + 平移",
}


def _notes():
    out = {}
    for key, (name, _, _) in ARMS.items():
        zh = ZH_ARM[name]
        out[f"{key}_train"] = Note(
            f"{zh}：最后一轮的训练准确率 (%)", f"{name}: final training accuracy (%)"
        )
        out[f"{key}_test"] = Note(
            f"{zh}：最后一轮的留出集准确率 (%)", f"{name}: final held-out accuracy (%)"
        )
        out[f"{key}_gap"] = Note(
            f"{zh}：训练与留出集准确率之差（百分点）",
            f"{name}: training minus held-out accuracy (points)",
        )
        out[f"{key}_best_test"] = Note(
            f"{zh}：各轮中最高的留出集准确率 (%)",
            f"{name}: best held-out accuracy over the epochs (%)",
        )
        out[f"{key}_epoch_ms"] = Note(
            f"{zh}：每轮训练时间，核函数版 (ms)",
            f"{name}: training time per epoch on the kernels (ms)",
            "{:.1f}",
        )
    return out


ZH = {"epoch": "轮次 (epoch)", "accuracy (%)": "准确率 (%)"}
for _name, _zh in ZH_ARM.items():
    ZH[f"training, {_name}"] = f"训练集，{_zh}"
    ZH[f"held-out, {_name}"] = f"留出集，{_zh}"

EXPERIMENT = Experiment(
    name="a10-dropout",
    title={
        "zh": "dropout 与数据增强：训练集与留出集准确率之差",
        "en": "Dropout and data augmentation: the gap between training and "
        "held-out accuracy",
    },
    run=run,
    families=(*FAMILIES, "dropout"),
    files=FILES,
    notes=_notes(),
    zh=ZH,
)
