"""A8: where does pre-training help? The same 64-256-256-10 network on the
binarised digits, started three ways (a greedily pre-trained RBM stack, random
sigmoid weights, ReLU with He's init) and fine-tuned the same way on 1%, 10% and
100% of the training labels. Pre-training always sees all the training images,
without labels. The bars are the mean held-out accuracy over the seeds; the notes
give the standard deviations and, seed by seed, how often the DBN beat ReLU on
the very same labelled images."""

from __future__ import annotations

import numpy as np

from thousand.experiments import Experiment, Note
from thousand.models import dbn as D

ARMS = {
    "pre-trained": "DBN: pre-trained, sigmoid",
    "random": "random init, sigmoid",
    "relu": "random init, ReLU + He",
}
FAMILIES = (
    "matmul",
    "transpose",
    "bias_sigmoid",
    "bernoulli",
    "col_sum",
    "sgd",
    "bias_relu",
    "bias_add",
    "sigmoid_backward",
    "relu_backward",
    "softmax_xent",
)
FILES = (
    "models/dbn.py",
    "models/rbm.py",
    "models/mlp.py",
    "models/layers.py",
    "models/data.py",
)
KEYS = {0.01: "1", 0.1: "10", 1.0: "100"}


def run(quick: bool) -> dict:
    if quick:  # a check that the code runs: 200 images, tiny layers, 5 steps
        X_train, X_test, y_train, y_test = D.binary_digits()
        data = X_train[:200], X_test[:100], y_train[:200], y_test[:100]
        acc = D.compare(
            range(2),
            sizes=[64, 32, 32, 10],
            pretraining={**D.PRETRAIN, "epochs": 1},
            tuning={**D.FINETUNE, "steps": 5},
            data=data,
        )
        n_labels = len(D.labelled(data[2], 0.01, 0))
    else:
        acc = D.compare(range(D.SEEDS))
        n_labels = len(D.labelled(D.binary_digits()[2], 0.01, 0))
    fractions = list(D.FRACTIONS)
    notes = {"seeds": len(acc["relu"][fractions[0]]), "labels_1": n_labels}
    for arm in ARMS:
        for f in fractions:
            notes[f"sd_{arm.replace('-', '_')}_{KEYS[f]}"] = 100 * float(
                np.std(acc[arm][f], ddof=1)
            )
    for f in fractions:  # the same seed: the same labelled images for both
        wins = np.greater(acc["pre-trained"][f], acc["relu"][f])
        notes[f"wins_{KEYS[f]}"] = int(wins.sum())
    return {
        "kind": "bars",
        "x": {
            "label": "share of the training labels used",
            "values": [f"{f:.0%}" for f in fractions],
            "log": False,
        },
        "y": {
            "label": "held-out accuracy (%), mean over seeds",
            "log": False,
            "format": "{:.1f}",
        },
        "series": {
            name: [100 * float(np.mean(acc[arm][f])) for f in fractions]
            for arm, name in ARMS.items()
        },
        "notes": notes,
    }


def _sd_notes() -> dict:
    zh = {
        "pre-trained": "DBN 预训练",
        "random": "随机初始化 sigmoid",
        "relu": "ReLU + He",
    }
    return {
        f"sd_{arm.replace('-', '_')}_{k}": Note(
            f"标准差，{zh[arm]}，{k}% 标签（百分点）",
            f"standard deviation, {ARMS[arm]}, {k}% of the labels (points)",
            "{:.1f}",
        )
        for arm in ARMS
        for k in KEYS.values()
    }


NOTES = {
    "seeds": Note(
        "种子数（每个种子：RBM 堆叠、标签子集、初始权重、批次顺序）",
        "seeds (each: an RBM stack, a labelled subset, the starting "
        "weights, the batch order)",
        "{:.0f}",
    ),  # fmt: skip
    "labels_1": Note("1% 标签时用到的带标签图像数", "labelled images at 1%", "{:.0f}"),
    **_sd_notes(),
    **{
        f"wins_{k}": Note(
            f"{k}% 标签时 DBN 胜过 ReLU + He 的种子数（同一批带标签图像）",
            f"seeds where the DBN beat ReLU + He at {k}% of the labels "
            "(the same labelled images)",
            "{:.0f}",
        )
        for k in KEYS.values()
    },
}

EXPERIMENT = Experiment(
    name="a8-dbn-labels",
    title={
        "zh": "同一个网络的三种起点：标签越少，预训练越有用吗？",
        "en": "One network, three starts: does pre-training help when labels are few?",
    },
    run=run,
    families=FAMILIES,
    files=FILES,
    notes=NOTES,
    zh={
        "share of the training labels used": "用到的训练标签比例",
        "held-out accuracy (%), mean over seeds": "留出集准确率 (%)，各种子的平均",
        "DBN: pre-trained, sigmoid": "DBN：预训练，sigmoid",
        "random init, sigmoid": "随机初始化，sigmoid",
        "random init, ReLU + He": "随机初始化，ReLU + He",
    },
)
