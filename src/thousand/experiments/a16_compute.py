"""A16: the same four pre-training runs as a16-scaling, drawn as Kaplan et al.
(2020) draw theirs: the validation loss along each run over the compute spent so
far, C = 6 N D (N parameters without embeddings, D tokens). At equal compute a
larger model is ahead as long as the data lasts."""

from __future__ import annotations

from thousand.experiments import Experiment, Note
from thousand.models import gpt

SIZES = tuple(gpt.SIZES)


def run(quick: bool) -> dict:
    runs = {size: gpt.pretrained(size, quick) for size in SIZES}
    points = {}  # compute -> {size: loss}
    for size, r in runs.items():
        per_step = 6 * gpt.n_params(r["cfg"]) * r["tokens"] / r["curve"]["step"][-1]
        for step, val in zip(r["curve"]["step"], r["curve"]["val"], strict=True):
            points.setdefault(per_step * step, {})[size] = val
    xs = sorted(points)
    return {
        "kind": "lines",
        "x": {
            "label": "training compute (FLOPs)",
            "values": xs,
            "log": 10,
            "format": "{:.2e}",
        },
        "y": {"label": "validation loss (nats/token)", "log": True, "format": "{:.3f}"},
        "series": {size: [points[x].get(size) for x in xs] for size in SIZES},
        "notes": {f"pflops_{size}": r["flops"] / 1e15 for size, r in runs.items()},
    }


EXPERIMENT = Experiment(
    name="a16-compute",
    title={
        "zh": "验证损失随训练算力的变化，每种规模一条曲线（C = 6ND）",
        "en": "Validation loss over training compute, one line per size (C = 6ND)",
    },
    run=run,
    families=gpt.FAMILIES,
    files=gpt.FILES,
    notes={
        f"pflops_{size}": Note(
            f"{size}：训练总算力 (PFLOP)",
            f"{size}: training compute (PFLOP)",
            "{:.3f}",
        )
        for size in SIZES
    },
    zh={
        "training compute (FLOPs)": "训练算力 (FLOPs)",
        "validation loss (nats/token)": "验证损失（nats/词元）",
    }
    | {size: size for size in SIZES},
)
