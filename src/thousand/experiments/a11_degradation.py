"""A11: the degradation problem (He et al. 2015, sec. 4.2, fig. 6), scaled down.
CIFAR-style networks of depth 20 and 56 (three stages of 3 or 9 blocks of two
3 x 3 convolutions, 16, 32 and 64 channels, batch norm after every convolution)
on the digits at 16 x 16 (the three stages see 16, 8 and 4 pixels a side as
CIFAR's 32, 16 and 8), plain and residual (identity shortcuts, a 1 x 1
projection where the shape changes: option B). He's learning rate 0.1 and batch
size (64 here, 128 there), plain SGD without momentum or weight decay, 20 epochs
(what the time budget allows: 420 steps against the paper's 64,000).

The training error is the share of the training images misclassified after each
epoch, in evaluation mode (batch norm calibrated, no augmentation): the quantity
whose rise with depth the paper calls degradation. The 8 x 8 digits are easy, but
not for the deep plain network: a first try on the PyTorch twin (10 epochs) left
plain-56 at 31% training error where plain-20 reached 0.

Also the time per epoch of ResNet-20 and ResNet-56 on the kernels against their
PyTorch twins (the same weights and batches; on the GPU when PyTorch has CUDA,
TF32 off)."""

from __future__ import annotations

from thousand.experiments import Experiment, Note
from thousand.models import deep_cnns as D

SETTINGS = {"batch": 64, "lr": 0.1, "seed": 0}
EPOCHS, TWIN_EPOCHS = 20, 4
ARMS = {  # key: (name, blocks per stage, residual)
    "plain20": ("plain-20", 3, False),
    "plain56": ("plain-56", 9, False),
    "res20": ("ResNet-20", 3, True),
    "res56": ("ResNet-56", 9, True),
}
FAMILIES = (
    "conv",
    "conv_backward_data",
    "conv_backward_filter",
    "batch_norm",
    "batch_norm_inference",
    "batch_norm_backward",
    "bias_relu",
    "relu_backward",
    "add_relu",
    "vector_add",
    "global_avg_pool",
    "global_avg_pool_backward",
    "bias_add",
    "col_sum",
    "matmul",
    "transpose",
    "softmax_xent",
    "sgd",
)
FILES = (
    "models/cnn.py",
    "models/cnn_twin.py",
    "models/deep_cnns.py",
    "models/layers.py",
    "models/data.py",
)
QUICK_BLOCKS = {3: 1, 9: 2}  # quick: depth 8 and 14, 2 channels, 8 x 8 images


def data(quick: bool):
    """The digits at 16 x 16 (quick: 32 training and 16 held-out at 8 x 8)."""
    if not quick:
        return D.digit_images(16), dict(SETTINGS), EPOCHS, 16
    X_train, X_test, y_train, y_test = D.digit_images(8)
    settings = {**SETTINGS, "batch": 16}
    return (X_train[:32], X_test[:16], y_train[:32], y_test[:16]), settings, 1, 2


def train(quick: bool, blocks: int, **options):
    """One ResNet (resnet's options) trained on the digits; its curves and spec."""
    (X_train, X_test, y_train, y_test), settings, epochs, width = data(quick)
    blocks = QUICK_BLOCKS.get(blocks, blocks) if quick else blocks
    lr = options.pop("lr", settings["lr"])
    spec = D.resnet(0, blocks, width, **options)
    net = D.network(spec, settings["batch"])
    r = D.curves(
        net, X_train, y_train, X_test, y_test, epochs, **{**settings, "lr": lr}
    )
    return r, spec


def errors(accuracies) -> list[float]:
    return [100 * (1 - a) for a in accuracies]


def summary(key: str, r: dict, spec) -> dict:
    train, test = errors(r["train_acc"]), errors(r["test_acc"])
    return {
        f"{key}_train_error": train[-1],
        f"{key}_min_train_error": min(train),
        f"{key}_test_error": test[-1],
        f"{key}_epoch_ms": 1e3 * D.steady(r["seconds"]),
        f"{key}_params": D.count_params(spec),
    }


def summary_notes(key: str, name: str, zh: str) -> dict:
    return {
        f"{key}_train_error": Note(
            f"{zh}：最后一轮的训练误差 (%)", f"{name}: final training error (%)"
        ),
        f"{key}_min_train_error": Note(
            f"{zh}：各轮中最低的训练误差 (%)",
            f"{name}: lowest training error over the epochs (%)",
        ),
        f"{key}_test_error": Note(
            f"{zh}：最后一轮的留出集误差 (%)", f"{name}: final held-out error (%)"
        ),
        f"{key}_epoch_ms": Note(
            f"{zh}：每轮训练时间，核函数版 (ms)",
            f"{name}: training time per epoch on the kernels (ms)",
            "{:.1f}",
        ),
        f"{key}_params": Note(f"{zh}：参数数", f"{name}: parameters", "{:,.0f}"),
    }


def run(quick: bool) -> dict:
    series, notes = {}, {}
    (X_train, _, y_train, _), settings, epochs, _ = data(quick)
    for key, (name, blocks, residual) in ARMS.items():
        r, spec = train(quick, blocks, residual=residual)
        series[name] = errors(r["train_acc"])
        notes.update(summary(key, r, spec))
        if residual:  # the kernels against the PyTorch twin, per epoch
            twin_s, device = D.twin_epoch_seconds(
                spec,
                X_train,
                y_train,
                epochs=1 if quick else TWIN_EPOCHS,
                **settings,
            )
            notes[f"{key}_twin_epoch_ms"] = 1e3 * twin_s
            notes[f"{key}_ratio"] = (
                notes[f"{key}_epoch_ms"] / notes[f"{key}_twin_epoch_ms"]
            )
    notes["twin_on_gpu"] = 1 if device == "cuda" else 0
    return {
        "kind": "lines",
        "x": {"label": "epoch", "values": list(range(1, epochs + 1)), "log": False},
        "y": {"label": "training error (%)", "log": False, "format": "{:.2f}"},
        "series": series,
        "notes": notes,
    }


ZH_NAMES = {
    "plain-20": "20 层普通网络",
    "plain-56": "56 层普通网络",
    "ResNet-20": "ResNet-20",
    "ResNet-56": "ResNet-56",
}


def _notes():
    out = {}
    for key, (name, _, residual) in ARMS.items():
        out.update(summary_notes(key, name, ZH_NAMES[name]))
        if residual:
            out[f"{key}_twin_epoch_ms"] = Note(
                f"{name}：每轮训练时间，PyTorch 版 (ms)",
                f"{name}: training time per epoch of the PyTorch twin (ms)",
                "{:.1f}",
            )
            out[f"{key}_ratio"] = Note(
                f"{name}：每轮时间比，核函数版 / PyTorch 版",
                f"{name}: time per epoch, kernels / PyTorch twin",
            )
    out["twin_on_gpu"] = Note(
        "PyTorch 版是否在 GPU 上（1 是，0 在 CPU 上）",
        "the PyTorch twin ran on the GPU (1) or the CPU (0)",
        "{:.0f}",
    )
    return out


EXPERIMENT = Experiment(
    name="a11-degradation",
    title={
        "zh": "退化问题：更深的普通网络训练误差更高，同样深度的残差网络没有",
        "en": "The degradation problem: the deeper plain network trains to a higher "
        "error, the residual network of the same depth does not",
    },
    run=run,
    families=FAMILIES,
    files=FILES,
    notes=_notes(),
    zh={
        "epoch": "轮次 (epoch)",
        "training error (%)": "训练误差 (%)",
        **ZH_NAMES,
    },
)
