"""A9: beta-VAE's trade-off (Higgins et al. 2017). The same VAE (8 latent numbers)
trained with the KL term weighted by beta: the chart shows both terms on the
held-out digits for each beta; the notes count the active latent units (Burda et
al.'s measure), which fall as the prior's pull grows: posterior collapse, unit by
unit."""

from __future__ import annotations

from thousand.experiments import Experiment, Note
from thousand.models import vae as V

BETAS = (0.5, 1.0, 2.0, 4.0, 8.0)


def run(quick: bool) -> dict:
    rec, kl, active = [], [], {}
    for beta in BETAS:
        cfg = V.Config(
            hidden=V.SETTINGS["hidden"], latent=V.SETTINGS["latent"], beta=beta
        )
        model, X_test, _ = V.trained(cfg, quick)
        r, k, *_ = model.evaluate(X_test)
        rec.append(float(r.mean()))
        kl.append(float(k.mean()))
        active[beta] = V.active_units(model, X_test)
    return {
        "kind": "lines",
        "x": {"label": "beta (the KL term's weight)", "values": list(BETAS), "log": 2},
        "y": {"label": "nats per picture (held-out)", "log": False, "format": "{:.2f}"},
        "series": {"reconstruction -E[log p(x|z)]": rec, "KL(q(z|x) || p(z))": kl},
        "notes": {f"active_{b:g}": n for b, n in active.items()},
    }


EXPERIMENT = Experiment(
    name="a9-vae-beta",
    title={
        "zh": "beta-VAE：KL 权重 beta 对重构项与 KL 项的取舍",
        "en": "beta-VAE: how the KL term's weight trades reconstruction for KL",
    },
    run=run,
    families=(
        "matmul",
        "transpose",
        "bias_add",
        "bias_relu",
        "relu_backward",
        "col_sum",
        "sigmoid",
        "axpy",
        "copy",
        "matrix_add",
        "adamw",
        "reparam_kl",
        "reparam_kl_backward",
    ),
    files=("models/vae.py", "models/layers.py", "models/data.py"),
    notes={
        f"active_{b:g}": Note(
            f"beta = {b:g} 时的活跃隐单元数（共 8 个）",
            f"active latent units at beta = {b:g} (of 8)",
            "{:.0f}",
        )
        for b in BETAS
    },
    zh={
        "beta (the KL term's weight)": "beta（KL 项的权重）",
        "nats per picture (held-out)": "每张图的奈特数（留出集）",
        "reconstruction -E[log p(x|z)]": "重构项 -E[log p(x|z)]",
        "KL(q(z|x) || p(z))": "KL(q(z|x) || p(z))",
    },
)
