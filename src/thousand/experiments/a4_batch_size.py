"""A4: when does training on the kernels beat NumPy? The time of one training
epoch on the digits for batch sizes from 8 to the whole training set, for the
post's MLP (128 hidden units) and a wide one (2048), on the kernels and in NumPy.

A step launches about twenty kernels whatever the batch; at batch 32 each has a
few thousand numbers to work on, so the launches, not the arithmetic, set the
time. Fewer, larger batches and wider layers give each launch more work."""

from __future__ import annotations

from thousand.experiments import Experiment, Note
from thousand.models import mlp
from thousand.models.data import digits

BATCHES = (8, 32, 128, 512, 1347)  # 1347: the whole training set, one step an epoch
WIDTHS = (128, 2048)  # the post's hidden layer, and a wide one
EPOCHS = 3  # timed, after one untimed epoch (compilation, scratch buffers)
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


def epoch_ms(make, width, batch, X, y, epochs) -> float:
    net = make([64, width, 10], "relu", 0)
    settings = {"batch": batch, "lr": mlp.DIGITS_SETTINGS["lr"], "seed": 0}
    mlp.fit(net, X, y, epochs=1, **settings)  # warm-up, not timed
    return 1e3 * mlp.fit(net, X, y, epochs=epochs, **settings) / epochs


def run(quick: bool) -> dict:
    X, _, y, _ = digits()
    batches, widths, epochs = BATCHES, WIDTHS, EPOCHS
    if quick:  # a check that the code runs: two batch sizes, one width, 128 images
        X, y, batches, widths, epochs = X[:128], y[:128], (32, 128), (128,), 1
    series, ms = {}, {}
    for width in widths:
        for side, make in (("kernels", mlp.network), ("NumPy", mlp.network_twin)):
            ms[side, width] = [epoch_ms(make, width, b, X, y, epochs) for b in batches]
            series[f"{side}, {width} hidden"] = ms[side, width]
    small, wide, at_32 = widths[0], widths[-1], batches.index(32)
    return {
        "kind": "lines",
        "x": {"label": "batch size", "values": list(batches), "log": True},
        "y": {"label": "ms per epoch", "log": True, "format": "{:.2f}"},
        "series": series,
        "notes": {
            "ratio_small": ms["kernels", small][at_32] / ms["NumPy", small][at_32],
            "ratio_wide": ms["kernels", wide][-1] / ms["NumPy", wide][-1],
            "best_small": min(
                k / n
                for k, n in zip(ms["kernels", small], ms["NumPy", small], strict=True)
            ),
        },
    }


NOTES = {
    "ratio_small": Note(
        "时间比，核函数版 / NumPy：隐藏层 128，批大小 32（正文的设置）",
        "time ratio, kernels / NumPy: 128 hidden, batch 32 (the post's settings)",
    ),
    "best_small": Note(
        "时间比，核函数版 / NumPy：隐藏层 128，各批大小中最小的",
        "time ratio, kernels / NumPy: 128 hidden, the lowest over the batch sizes",
    ),
    "ratio_wide": Note(
        "时间比，核函数版 / NumPy：最宽的隐藏层（完整运行为 2048），"
        "最大的批（整个训练集）",
        "time ratio, kernels / NumPy: the widest layer (2048 in the full run), "
        "the largest batch (the whole training set)",
    ),
}
ZH = {
    "batch size": "批大小 (batch size)",
    "ms per epoch": "每轮毫秒数",
    "kernels, 128 hidden": "核函数版，隐藏层 128",
    "NumPy, 128 hidden": "NumPy 版，隐藏层 128",
    "kernels, 2048 hidden": "核函数版，隐藏层 2048",
    "NumPy, 2048 hidden": "NumPy 版，隐藏层 2048",
}

EXPERIMENT = Experiment(
    name="a4-batch-size",
    title={
        "zh": "批大小与层宽：核函数版训练何时快过 NumPy",
        "en": "Batch size and width: when training on the kernels beats NumPy",
    },
    run=run,
    families=FAMILIES,
    notes=NOTES,
    zh=ZH,
)
