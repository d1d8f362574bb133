"""A8: the greedy pre-training itself, and what the stack has learned to
generate. The held-out reconstruction error of each RBM of the stack after each
of its epochs (RBM 2 reconstructs RBM 1's codes of the held-out digits, not the
pixels), then 16 dreams: Gibbs chains run in the top RBM from random units and
carried down to the pixels (dbn.sample), drawn as 8 x 8 pictures."""

from __future__ import annotations

from thousand.experiments import Experiment, Note
from thousand.experiments.a8_dbn_labels import FAMILIES, FILES
from thousand.models import dbn as D

CHAINS, GIBBS_STEPS = 16, 1000
SERIES = ("RBM 1 (pixels)", "RBM 2 (RBM 1's codes)")  # what each reconstructs


def picture_label(steps: int, lang: str = "en") -> str:
    if lang == "zh":
        return (
            f"{CHAINS} 个“梦”：在顶层 RBM 里从随机状态出发做 {steps:,} 步 Gibbs "
            "采样，再逐层向下到像素（颜色是像素为 1 的概率）"
        )
    return (
        f"{CHAINS} dreams: {steps:,} Gibbs steps in the top RBM from random units, "
        "then down to the pixels (probability a pixel is on)"
    )


def run(quick: bool) -> dict:
    X_train, X_test, _, _ = D.binary_digits()
    sizes, settings, steps = D.SIZES, D.PRETRAIN, GIBBS_STEPS
    if quick:  # a check that the code runs: 200 images, tiny layers, 5 steps
        X_train, X_test, sizes = X_train[:200], X_test[:100], [64, 32, 32, 10]
        settings, steps = {**settings, "epochs": 2}, 5
    errors = {k: [] for k in range(1, len(sizes) - 1)}
    stack = D.pretrain(
        X_train,
        sizes,
        seed=0,
        X_test=X_test,
        log=lambda k, epoch, err: errors[k].append(err),
        **settings,
    )
    dreams = D.sample(stack, chains=CHAINS, steps=steps, seed=0)
    epochs = settings["epochs"]
    return {
        "kind": "lines",
        "x": {"label": "epoch", "values": list(range(1, epochs + 1)), "log": False},
        "y": {
            "label": "held-out reconstruction error (mean squared)",
            "log": False,
            "format": "{:.4f}",
        },
        "series": dict(zip(SERIES, errors.values(), strict=True)),
        "notes": {
            "final_1": errors[1][-1],
            "final_2": errors[2][-1],
            "gibbs_steps": steps,
        },
        "images": {
            "label": picture_label(steps),
            "shape": [8, 8],
            "values": dreams.tolist(),
        },
    }


EXPERIMENT = Experiment(
    name="a8-dbn-samples",
    title={
        "zh": "逐层预训练：每个 RBM 的留出集重构误差，以及顶层 RBM 的“梦”",
        "en": "Greedy pre-training: each RBM's held-out reconstruction, and dreams",
    },
    run=run,
    families=FAMILIES,
    files=FILES,
    notes={
        "final_1": Note(
            "RBM 1 最后一轮的重构误差（像素）",
            "RBM 1's reconstruction error after its last epoch (pixels)",
            "{:.4f}",
        ),
        "final_2": Note(
            "RBM 2 最后一轮的重构误差（RBM 1 的编码）",
            "RBM 2's reconstruction error after its last epoch (RBM 1's codes)",
            "{:.4f}",
        ),
        "gibbs_steps": Note(
            "每条链的 Gibbs 采样步数", "Gibbs steps per chain", "{:.0f}"
        ),
    },
    zh={
        "epoch": "轮次 (epoch)",
        "held-out reconstruction error (mean squared)": "留出集重构误差（均方）",
        SERIES[0]: "RBM 1（像素）",
        SERIES[1]: "RBM 2（RBM 1 的编码）",
        picture_label(GIBBS_STEPS): picture_label(GIBBS_STEPS, "zh"),
    },
)
