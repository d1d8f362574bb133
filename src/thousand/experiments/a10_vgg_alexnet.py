"""A10: a small VGG-style network (stacks of 3 x 3 convolutions; Simonyan &
Zisserman 2014) against the small AlexNet-style one (5 x 5 convolutions,
overlapping pooling; Krizhevsky et al. 2012) on the digits (32 x 32), both with
ReLU and dropout 0.5, from their own seeded weights on the same batches: held-out
accuracy over the epochs, parameters, and time per epoch on the kernels against
each one's PyTorch twin (same spec and weights, same batches; on the GPU when
PyTorch has CUDA, TF32 off; its own dropout masks).

The arithmetic of the stacks is computed here, not measured: n stacked 3 x 3
convolutions (stride 1) see a (2n + 1) x (2n + 1) window, with n 9 C^2 weights
where one convolution of that size has (2n + 1)^2 C^2 (C channels in and out)."""

from __future__ import annotations

from thousand.experiments import Experiment, Note
from thousand.experiments.a10_relu_tanh import FAMILIES, FILES
from thousand.models import deep_cnns as D

SETTINGS = {"batch": 64, "lr": 0.05, "seed": 0}
EPOCHS, TWIN_EPOCHS = 20, 4  # the twin timed over its last 3 (the first warms up)
NETS = {"alexnet": "AlexNet-style", "vgg": "VGG-style"}


def stack_arithmetic() -> dict:
    """Receptive field and weights (per C^2) of n stacked 3 x 3 convolutions,
    against the single convolution with the same field."""
    out = {}
    for n in (2, 3):
        field = 2 * n + 1  # each 3 x 3 layer widens the window by 2
        out[f"stack{n}_field"] = field
        out[f"stack{n}_weights"] = 9 * n
        out[f"single{n}_weights"] = field * field
        out[f"stack{n}_saving"] = 100 * (1 - 9 * n / field**2)
    return out


def run(quick: bool) -> dict:
    size, width, hidden = (16, 2, 16) if quick else (32, 32, 256)
    X_train, X_test, y_train, y_test = D.digit_images(size)
    settings, epochs, twin_epochs = dict(SETTINGS), EPOCHS, TWIN_EPOCHS
    if quick:  # a check that the code runs: 64 images in batches of 16
        X_train, y_train, X_test, y_test = (
            X_train[:64],
            y_train[:64],
            X_test[:32],
            y_test[:32],
        )
        settings["batch"], epochs, twin_epochs = 16, 2, 1
    specs = {
        "alexnet": D.alexnet(0, width, size, "relu", dropout=0.5, hidden=hidden),
        "vgg": D.vgg(0, width, size, dropout=0.5, hidden=hidden),
    }
    series, notes = {}, stack_arithmetic()
    for key, spec in specs.items():
        net = D.network(spec, settings["batch"])
        r = D.curves(net, X_train, y_train, X_test, y_test, epochs, **settings)
        series[NETS[key]] = [100 * a for a in r["test_acc"]]
        kernel_s = D.steady(r["seconds"])
        twin_s, device = D.twin_epoch_seconds(
            spec, X_train, y_train, epochs=twin_epochs, **settings
        )
        notes.update(
            {
                f"{key}_params": D.count_params(spec),
                f"{key}_conv_params": D.count_params(
                    [s for s in spec if s[0] == "conv"]
                ),
                f"{key}_train": 100 * r["train_acc"][-1],
                f"{key}_test": 100 * r["test_acc"][-1],
                f"{key}_epoch_ms": 1e3 * kernel_s,
                f"{key}_twin_epoch_ms": 1e3 * twin_s,
                f"{key}_ratio": kernel_s / twin_s,
            }
        )
    notes["twin_on_gpu"] = 1 if device == "cuda" else 0
    return {
        "kind": "lines",
        "x": {"label": "epoch", "values": list(range(1, epochs + 1)), "log": False},
        "y": {"label": "held-out accuracy (%)", "log": False, "format": "{:.2f}"},
        "series": series,
        "notes": notes,
    }


def _notes():
    out = {}
    for n in (2, 3):
        out[f"stack{n}_field"] = Note(
            f"{n} 个 3×3 卷积叠起来的感受野边长（像素）",
            f"receptive field of {n} stacked 3 x 3 convolutions (pixels a side)",
            "{:.0f}",
        )
        out[f"stack{n}_weights"] = Note(
            f"{n} 个 3×3 卷积的权重数（以 C² 为单位）",
            f"weights of {n} stacked 3 x 3 convolutions (in units of C^2)",
            "{:.0f}",
        )
        out[f"single{n}_weights"] = Note(
            "同样感受野的单个卷积的权重数（以 C² 为单位）",
            "weights of one convolution with the same field (in units of C^2)",
            "{:.0f}",
        )
        out[f"stack{n}_saving"] = Note(
            f"{n} 个 3×3 卷积比单个大卷积少用的权重 (%)",
            f"weights saved by {n} stacked 3 x 3 convolutions against one (%)",
            "{:.1f}",
        )
    for key, name in NETS.items():
        zh = {"alexnet": "AlexNet 式", "vgg": "VGG 式"}[key]
        out[f"{key}_params"] = Note(
            f"{zh}网络的参数总数", f"{name}: parameters in all", "{:,.0f}"
        )
        out[f"{key}_conv_params"] = Note(
            f"{zh}网络卷积层的参数数",
            f"{name}: parameters of the convolutions",
            "{:,.0f}",
        )
        out[f"{key}_train"] = Note(
            f"{zh}网络最后的训练准确率 (%)", f"{name}: final training accuracy (%)"
        )
        out[f"{key}_test"] = Note(
            f"{zh}网络最后的留出集准确率 (%)", f"{name}: final held-out accuracy (%)"
        )
        out[f"{key}_epoch_ms"] = Note(
            f"{zh}网络每轮训练时间，核函数版 (ms)",
            f"{name}: training time per epoch on the kernels (ms)",
            "{:.1f}",
        )
        out[f"{key}_twin_epoch_ms"] = Note(
            f"{zh}网络每轮训练时间，PyTorch 版 (ms)",
            f"{name}: training time per epoch of the PyTorch twin (ms)",
            "{:.1f}",
        )
        out[f"{key}_ratio"] = Note(
            f"{zh}网络每轮时间比：核函数版 / PyTorch 版",
            f"{name}: time per epoch, kernels / PyTorch twin",
        )
    out["twin_on_gpu"] = Note(
        "PyTorch 版是否在 GPU 上（1 是，0 在 CPU 上）",
        "the PyTorch twin ran on the GPU (1) or the CPU (0)",
        "{:.0f}",
    )
    return out


EXPERIMENT = Experiment(
    name="a10-vgg-alexnet",
    title={
        "zh": "VGG 式（3×3 卷积堆叠）与 AlexNet 式网络：留出集准确率",
        "en": "VGG-style (stacked 3 x 3 convolutions) against AlexNet-style: "
        "held-out accuracy",
    },
    run=run,
    families=(*FAMILIES, "dropout"),
    files=(*FILES, "models/cnn_twin.py"),
    notes=_notes(),
    zh={
        "epoch": "轮次 (epoch)",
        "held-out accuracy (%)": "留出集准确率 (%)",
        "AlexNet-style": "AlexNet 式",
        "VGG-style": "VGG 式",
    },
)
