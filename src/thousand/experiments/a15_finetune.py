"""A15: GPT-1's recipe on the site's posts. The "small" GPT is pre-trained as a
language model on the train split, then fine-tuned to say which track, A or B, a
paragraph comes from, from a few hundred labelled paragraphs; the same model
from its initial weights (no pre-training) is trained on the same labels, at the
same two learning rates. The held-out accuracy along the fine-tuning steps
measures what pre-training bought."""

from __future__ import annotations

import numpy as np

from thousand.experiments import Experiment, Note
from thousand.models import gpt

SIZE = "small"


def run(quick: bool) -> dict:
    pre = gpt.pretrained(SIZE, quick)
    cfg = pre["cfg"]
    s = gpt.QUICK_FINETUNE if quick else gpt.FINETUNE
    task = gpt.track_task("train", cfg.block_size, limit=s["labels"], seed=1)
    held_out = gpt.track_task("val", cfg.block_size, limit=64 if quick else None)
    starts = {"pre-trained": pre["params"], "from scratch": gpt.init(cfg, 0)}
    series, finals = {}, {}
    for start, params in starts.items():
        for lr in s["lrs"]:
            c = gpt.finetune(
                gpt.Trainer(cfg, params),
                task,
                held_out,
                steps=s["steps"],
                batch=s["batch"],
                lr=lr,
                every=s["every"],
            )
            series[f"{start}, lr {lr:g}"] = [100 * a for a in c["accuracy"]]
            finals[(start, lr)] = 100 * c["accuracy"][-1]
    steps = c["step"]
    labels = held_out[1][np.arange(len(held_out[3])), held_out[3]]
    majority = 100 * max(np.mean(labels == labels[0]), np.mean(labels != labels[0]))
    best = {k: max(v for (st, _), v in finals.items() if st == k) for k in starts}
    return {
        "kind": "lines",
        "x": {"label": "fine-tuning step", "values": steps, "log": False},
        "y": {"label": "held-out accuracy (%)", "log": False, "format": "{:.1f}"},
        "series": series,
        "notes": {
            "pretrain_steps": gpt.QUICK_PRETRAIN["steps"]
            if quick
            else gpt.PRETRAIN["steps"],
            "pretrain_val_loss": pre["curve"]["val"][-1],
            "labels": s["labels"],
            "held_out": len(held_out[0]),
            "majority": majority,
            "pretrained_best": best["pre-trained"],
            "scratch_best": best["from scratch"],
            "gain": best["pre-trained"] - best["from scratch"],
        },
    }


EXPERIMENT = Experiment(
    name="a15-finetune",
    title={
        "zh": "先预训练再微调，对比从零训练：判断一段文字出自 A 线还是 B 线",
        "en": "Pre-trained then fine-tuned, against trained from scratch: "
        "which track a paragraph comes from",
    },
    run=run,
    families=gpt.FAMILIES,
    files=gpt.FILES,
    notes={
        "pretrain_steps": Note("预训练步数", "pre-training steps", "{:,.0f}"),
        "pretrain_val_loss": Note(
            "预训练后的验证损失（nats/词元）",
            "validation loss after pre-training (nats/token)",
            "{:.3f}",
        ),
        "labels": Note("带标签的训练段落数", "labelled training paragraphs", "{:.0f}"),
        "held_out": Note("留出段落数", "held-out paragraphs", "{:.0f}"),
        "majority": Note(
            "全猜多数类的正确率 (%)",
            "accuracy of always guessing the larger track (%)",
            "{:.1f}",
        ),
        "pretrained_best": Note(
            "预训练模型，较好学习率下的最终正确率 (%)",
            "pre-trained, final accuracy at its better learning rate (%)",
            "{:.1f}",
        ),
        "scratch_best": Note(
            "从零训练，较好学习率下的最终正确率 (%)",
            "from scratch, final accuracy at its better learning rate (%)",
            "{:.1f}",
        ),
        "gain": Note(
            "预训练带来的提升（百分点）", "gain from pre-training (points)", "{:+.1f}"
        ),
    },
    zh={
        "fine-tuning step": "微调步数",
        "held-out accuracy (%)": "留出集正确率 (%)",
        "pre-trained, lr 0.0001": "预训练后微调，学习率 0.0001",
        "pre-trained, lr 0.001": "预训练后微调，学习率 0.001",
        "from scratch, lr 0.0001": "从零训练，学习率 0.0001",
        "from scratch, lr 0.001": "从零训练，学习率 0.001",
    },
)
