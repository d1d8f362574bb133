"""A16: four sizes of the GPT, from 0.1 M to 10.6 M parameters (without the
embeddings), each pre-trained on the same tokens of the site's posts: the
validation loss over the model's size. The posts make a small corpus, so the
larger models see it many times over: where their validation loss stops
falling, the data, not the model, is what runs out."""

from __future__ import annotations

from thousand.experiments import Experiment, Note
from thousand.models import gpt

SIZES = tuple(gpt.SIZES)  # tiny, small, medium, large


def run(quick: bool) -> dict:
    runs = {size: gpt.pretrained(size, quick) for size in SIZES}
    params = [gpt.n_params(r["cfg"]) for r in runs.values()]
    vals = [r["curve"]["val"] for r in runs.values()]
    train_tokens = len(gpt.tokens("train"))
    notes = {}
    for size, r in runs.items():
        notes[f"val_{size}"] = r["curve"]["val"][-1]
        notes[f"params_{size}"] = gpt.n_params(r["cfg"]) / 1e6
        notes[f"seconds_{size}"] = r["seconds"]
    tokens = runs[SIZES[0]]["tokens"]
    notes |= {"tokens": tokens / 1e6, "epochs": tokens / train_tokens}
    return {
        "kind": "lines",
        "x": {"label": "parameters (without embeddings)", "values": params, "log": 10},
        "y": {"label": "loss (nats/token)", "log": True, "format": "{:.3f}"},
        "series": {
            "validation loss, end of training": [v[-1] for v in vals],
            "lowest validation loss": [min(v) for v in vals],
            "training loss, end of training": [
                r["curve"]["loss"][-1] for r in runs.values()
            ],
        },
        "notes": notes,
    }


def _size_notes() -> dict:
    out = {}
    for size in SIZES:
        out[f"val_{size}"] = Note(
            f"{size}：训练结束时的验证损失",
            f"{size}: validation loss at the end",
            "{:.3f}",
        )
        out[f"params_{size}"] = Note(
            f"{size}：参数量（不含嵌入，百万）",
            f"{size}: parameters without embeddings (millions)",
            "{:.2f}",
        )
        out[f"seconds_{size}"] = Note(
            f"{size}：训练用时（第 2 步起，s）",
            f"{size}: training time from step 2 on (s)",
            "{:.1f}",
        )
    return out


EXPERIMENT = Experiment(
    name="a16-scaling",
    title={
        "zh": "四种规模的 GPT，训练词元数相同：验证损失随参数量的变化",
        "en": "Four GPT sizes on the same tokens: validation loss over parameters",
    },
    run=run,
    families=gpt.FAMILIES,
    files=gpt.FILES,
    notes=_size_notes()
    | {
        "tokens": Note(
            "每个模型训练的词元数（百万）",
            "tokens each model trained on (millions)",
            "{:.2f}",
        ),
        "epochs": Note(
            "相当于把训练集过了几遍", "passes over the training split", "{:.1f}"
        ),
    },
    zh={
        "parameters (without embeddings)": "参数量（不含嵌入）",
        "loss (nats/token)": "损失（nats/词元）",
        "validation loss, end of training": "训练结束时的验证损失",
        "lowest validation loss": "最低验证损失",
        "training loss, end of training": "训练结束时的训练损失",
    },
)
