"""A10: ReLU against tanh in the same small AlexNet-style network on the digits
(32 x 32), as Krizhevsky et al. (2012, fig. 1) compared them: the training error
every few steps, and the steps each takes to reach the paper's 25% training
error and 5%. Both start from the initialisation made for their activation (He's
N(0, 2 / fan_in) for ReLU, LeCun's N(0, 1 / fan_in) for tanh), take the same
batches at the same learning rate (the paper tuned each), and have no dropout
(the paper's comparison had none)."""

from __future__ import annotations

from thousand.experiments import Experiment, Note
from thousand.models import deep_cnns as D

SETTINGS = {"batch": 64, "lr": 0.05, "seed": 0}
EPOCHS, EVERY = 10, 5  # training error every 5 steps (21 steps an epoch)
THRESHOLDS = (0.25, 0.05)  # training error: the paper's 25%, and 5%
FAMILIES = (
    "conv",
    "conv_backward_data",
    "conv_backward_filter",
    "max_pool",
    "max_pool_backward",
    "bias_relu",
    "bias_tanh",
    "relu_backward",
    "tanh_backward",
    "bias_add",
    "col_sum",
    "matmul",
    "transpose",
    "softmax_xent",
    "sgd",
)
FILES = ("models/cnn.py", "models/deep_cnns.py", "models/layers.py", "models/data.py")


def run(quick: bool) -> dict:
    size, width, hidden = (16, 2, 16) if quick else (32, 32, 256)
    X_train, X_test, y_train, y_test = D.digit_images(size)
    settings, epochs, every = dict(SETTINGS), EPOCHS, EVERY
    if quick:  # a check that the code runs: 64 images in batches of 16
        X_train, y_train, X_test, y_test = (
            X_train[:64],
            y_train[:64],
            X_test[:32],
            y_test[:32],
        )
        settings["batch"], epochs, every = 16, 1, 2
    runs = {}
    for activation in ("relu", "tanh"):
        spec = D.alexnet(0, width, size, activation, dropout=0, hidden=hidden)
        net = D.network(spec, settings["batch"])
        runs[activation] = D.curves(
            net, X_train, y_train, X_test, y_test, epochs, every=every, **settings
        )
    steps = runs["relu"]["at"]
    notes = {}
    for activation, r in runs.items():
        errors = [1 - a for a in r["train_acc"]]
        for t in THRESHOLDS:  # the first step whose error is at or below t
            at = [s for s, e in zip(steps, errors, strict=True) if e <= t]
            notes[f"{activation}_steps_{round(100 * t)}"] = at[0] if at else -1
        notes[f"{activation}_train_error"] = 100 * errors[-1]
        notes[f"{activation}_test_error"] = 100 * (1 - r["test_acc"][-1])
        notes[f"{activation}_epoch_ms"] = 1e3 * D.steady(r["seconds"])
    notes["steps_per_epoch"] = len(X_train) // settings["batch"]
    return {
        "kind": "lines",
        "x": {"label": "training step", "values": steps, "log": False},
        "y": {"label": "training error (%)", "log": False, "format": "{:.2f}"},
        "series": {
            f"{name}": [100 * (1 - a) for a in runs[key]["train_acc"]]
            for key, name in (("relu", "ReLU"), ("tanh", "tanh"))
        },
        "notes": notes,
    }


def _notes():
    out = {}
    for key, name in (("relu", "ReLU"), ("tanh", "tanh")):
        for t in THRESHOLDS:
            p = round(100 * t)
            out[f"{key}_steps_{p}"] = Note(
                f"{name} 网络的训练误差首次降到 {p}% 以下所用的步数"
                "（-1：运行中未达到）",
                f"{name}: training steps until the training error first reaches "
                f"{p}% (-1: not within the run)",
                "{:.0f}",
            )
        out[f"{key}_train_error"] = Note(
            f"{name} 网络最后的训练误差 (%)", f"{name}: final training error (%)"
        )
        out[f"{key}_test_error"] = Note(
            f"{name} 网络最后的留出集误差 (%)", f"{name}: final held-out error (%)"
        )
        out[f"{key}_epoch_ms"] = Note(
            f"{name} 网络每轮训练时间，核函数版 (ms)",
            f"{name}: training time per epoch on the kernels (ms)",
            "{:.1f}",
        )
    out["steps_per_epoch"] = Note(
        "每轮的训练步数", "training steps per epoch", "{:.0f}"
    )
    return out


EXPERIMENT = Experiment(
    name="a10-relu-tanh",
    title={
        "zh": "同一个 AlexNet 式网络用 ReLU 与 tanh：训练误差随步数的下降",
        "en": "ReLU against tanh in the same AlexNet-style network: training error "
        "over the steps",
    },
    run=run,
    families=FAMILIES,
    files=FILES,
    notes=_notes(),
    zh={
        "training step": "训练步数",
        "training error (%)": "训练误差 (%)",
        "ReLU": "ReLU",
        "tanh": "tanh",
    },
)
