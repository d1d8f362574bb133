"""A9: a VAE with two latent numbers, so its latent space can be drawn. The chart:
where each digit's held-out pictures sit on average (the mean of mu, per digit
and per axis). The picture: the decoder's output over a 12 x 12 grid of latent
points, z1 and z2 each from -2 to 2 (the prior's central region), tiled into one
96 x 96 picture (each pixel's probability less 1/2: red ink, blue paper): the
2-D latent space as the decoder sees it."""

from __future__ import annotations

import numpy as np

from thousand.experiments import Experiment, Note
from thousand.models import vae as V

GRID, SPAN = 12, 2.0


def run(quick: bool) -> dict:
    cfg = V.Config(hidden=V.SETTINGS["hidden"], latent=2)
    model, X_test, y_test = V.trained(cfg, quick, seed=1)
    mu, _ = model.encode(X_test)  # (n, 2)
    digits = list(range(10))
    means = [mu[y_test == d].astype(np.float64).mean(axis=0) for d in digits]
    r, k, *_ = model.evaluate(X_test)
    g = np.linspace(-SPAN, SPAN, GRID, dtype=np.float32)
    z1, z2 = np.meshgrid(g, g[::-1])  # z2 grows upwards, as on a plot
    Z = np.stack([z1.ravel(), z2.ravel()], axis=1)  # (GRID^2, 2), row by row
    P = model.decode(Z).reshape(GRID, GRID, 8, 8)
    tiled = P.transpose(0, 2, 1, 3).reshape(GRID * 8, GRID * 8)
    return {
        "kind": "bars",
        "x": {"label": "digit", "values": digits},
        "y": {"label": "mean of mu over held-out pictures", "format": "{:.2f}"},
        "series": {
            "z1": [float(m[0]) for m in means],
            "z2": [float(m[1]) for m in means],
        },
        "notes": {
            "rec": float(r.mean()),
            "kl": float(k.mean()),
            "active": V.active_units(model, X_test),
        },
        "images": {
            "label": "decoded grid: z1 from -2 (left) to 2, z2 from 2 (top) to -2; "
            "red: ink",
            "shape": list(tiled.shape),
            # less 1/2, so the site draws it red for ink and blue for paper, on the
            # scale of the other posts' pictures
            "values": [(tiled.astype(np.float64) - 0.5).ravel().tolist()],
        },
    }


EXPERIMENT = Experiment(
    name="a9-vae-latent",
    title={
        "zh": "二维隐空间的 VAE：各数字的位置与解码网格",
        "en": "A VAE with a 2-D latent space: where each digit sits, what it decodes",
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
        "rec": Note("留出集重构项", "held-out reconstruction term"),
        "kl": Note("留出集 KL 项", "held-out KL term"),
        "active": Note(
            "活跃隐单元数（共 2 个）", "active latent units (of 2)", "{:.0f}"
        ),
    },
    zh={
        "digit": "数字",
        "mean of mu over held-out pictures": "留出集上 mu 的均值",
        "z1": "z1",
        "z2": "z2",
        "decoded grid: z1 from -2 (left) to 2, z2 from 2 (top) to -2; red: ink": (
            "解码网格：z1 从 -2（左）到 2，z2 从 2（上）到 -2；红色为笔迹"
        ),
    },
)
