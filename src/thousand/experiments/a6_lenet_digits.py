"""A6: LeNet-5 trained on the digits on the kernels (im2col + GEMM convolutions):
the training loss and held-out accuracy after each epoch, and the time per epoch
against the same network in NumPy on the CPU. The NumPy twin is timed over its
first epochs only (NUMPY_EPOCHS): its full run would take minutes."""

from __future__ import annotations

from thousand.experiments import Experiment, Note
from thousand.experiments.a4_mlp_digits import NOTES, ZH, curve_result
from thousand.models import train as T

NUMPY_EPOCHS = 3

FAMILIES = (
    "conv2d",
    "conv2d_backward_data",
    "conv2d_backward_filter",
    "avg_pool",
    "avg_pool_backward",
    "bias_tanh",
    "tanh_backward",
    "bias_add",
    "matmul",
    "transpose",
    "col_sum",
    "softmax_xent",
    "sgd",
)


def run(quick: bool) -> dict:
    if quick:  # a check that the code runs: a few images, one epoch
        r = T.train(
            "lenet", epochs=1, train_limit=64, test_limit=50, log=lambda *_: None
        )
    else:
        r = T.train("lenet", numpy_epochs=NUMPY_EPOCHS, log=lambda *_: None)
    return curve_result(r)


EXPERIMENT = Experiment(
    name="a6-lenet-digits",
    title={
        "zh": "LeNet-5 在 digits 上的训练曲线（卷积用 im2col + GEMM 核函数）",
        "en": "LeNet-5 learning the digits, convolutions by im2col + GEMM kernels",
    },
    run=run,
    families=FAMILIES,
    notes={
        **NOTES,
        "numpy_accuracy": Note(
            f"留出集准确率，NumPy 版只训练 {NUMPY_EPOCHS} 轮 (%)",
            f"held-out accuracy, NumPy twin after {NUMPY_EPOCHS} epochs (%)",
        ),
    },
    zh=ZH,
)
