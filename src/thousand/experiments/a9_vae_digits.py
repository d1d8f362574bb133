"""A9: a VAE with 8 latent numbers trained on the binarised digits, on the
kernels. The chart: both terms of the ELBO on the held-out digits after each
epoch. The notes: the final terms, the importance-weighted log-likelihood (k = 100
draws per picture; Burda et al. 2015) and its gap to the ELBO, and how many latent
units are active. The pictures, four rows of eight: held-out digits, their
reconstructions, samples from the prior, and a walk in latent space from one
held-out digit to another."""

from __future__ import annotations

import numpy as np

from thousand.experiments import Experiment, Note
from thousand.models import vae as V

K_FULL, K_QUICK = 100, 10  # importance samples per picture


def run(quick: bool) -> dict:
    cfg = V.Config(hidden=V.SETTINGS["hidden"], latent=V.SETTINGS["latent"])
    history: list = []
    model, X_test, _ = V.trained(cfg, quick, history)
    epochs, rec, kl = (list(c) for c in zip(*history, strict=True))
    X_eval = X_test[:32] if quick else X_test
    r, k, *_ = model.evaluate(X_eval)
    elbo = float(-(r + k).mean())
    log_px = float(V.log_likelihood(model, X_eval, K_QUICK if quick else K_FULL).mean())
    # pictures: 8 held-out digits, their reconstructions (z = mu), 8 samples of
    # z ~ N(0, I) decoded, and 8 points on the line from digit 0's mu to digit 1's
    x8 = X_test[:8]
    mu, _ = model.encode(x8)
    recon = model.decode(mu)
    rng = np.random.default_rng(0)
    samples = model.decode(rng.standard_normal((8, cfg.latent)).astype(np.float32))
    t = np.linspace(0, 1, 8, dtype=np.float32)[:, None]
    walk = model.decode((1 - t) * mu[0] + t * mu[1])
    pictures = np.concatenate([x8, recon, samples, walk])
    return {
        "kind": "lines",
        "x": {"label": "epoch", "values": epochs, "log": False},
        "y": {"label": "nats per picture (held-out)", "log": False, "format": "{:.2f}"},
        "series": {
            "reconstruction -E[log p(x|z)]": rec,
            "KL(q(z|x) || p(z))": kl,
            "negative ELBO (their sum)": [a + b for a, b in zip(rec, kl, strict=True)],
        },
        "notes": {
            "latent": cfg.latent,
            "rec": rec[-1],
            "kl": kl[-1],
            "elbo": elbo,
            "log_px": log_px,
            "gap": log_px - elbo,
            "k": K_QUICK if quick else K_FULL,
            "active": V.active_units(model, X_test),
        },
        "images": {
            "label": "rows: held-out digits, reconstructions, samples, a walk "
            "from the first digit to the second; red: ink",
            "shape": [8, 8],
            # less 1/2: red for ink, blue for paper on the site's centred scale
            "values": (pictures.astype(np.float64) - 0.5).tolist(),
        },
    }


EXPERIMENT = Experiment(
    name="a9-vae-digits",
    title={
        "zh": "VAE（8 维隐变量）在二值化 digits 上训练：ELBO 的两项",
        "en": "A VAE with 8 latent numbers on binarised digits: the ELBO's two terms",
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
        "latent": Note("隐变量维数", "latent numbers", "{:.0f}"),
        "rec": Note("最后一轮的重构项", "reconstruction term after the last epoch"),
        "kl": Note("最后一轮的 KL 项", "KL term after the last epoch"),
        "elbo": Note("留出集的 ELBO（单次采样）", "held-out ELBO (one draw)"),
        "log_px": Note(
            "留出集的重要性加权对数似然", "held-out importance-weighted log p(x)"
        ),
        "gap": Note("对数似然与 ELBO 之差", "gap: log p(x) estimate minus ELBO"),
        "k": Note(
            "每张图的重要性采样数 k", "importance samples k per picture", "{:.0f}"
        ),
        "active": Note("活跃隐单元数", "active latent units", "{:.0f}"),
    },
    zh={
        "epoch": "轮次 (epoch)",
        "nats per picture (held-out)": "每张图的奈特数（留出集）",
        "reconstruction -E[log p(x|z)]": "重构项 -E[log p(x|z)]",
        "KL(q(z|x) || p(z))": "KL(q(z|x) || p(z))",
        "negative ELBO (their sum)": "负 ELBO（两项之和）",
        "rows: held-out digits, reconstructions, samples, a walk from the first "
        "digit to the second; red: ink": (
            "各行：留出集数字、重构、采样、从第一个数字走到第二个的插值；红色为笔迹"
        ),
    },
)
