"""A13: a GAN on a ring of eight Gaussians, trained twice from the same weights on
the same batches and noise: with the non-saturating generator loss and with the
saturating (minimax) one of Goodfellow et al. (2014, sec. 3). Over training, how
many of the eight modes each generator reaches (at least 20 of 2,000 samples
within 3 standard deviations of a mode's centre); beside it, 2-D histograms of
the non-saturating generator's samples as training goes, where mode collapse and
hopping between modes show."""

from __future__ import annotations

import numpy as np

from thousand.experiments import Experiment, Note
from thousand.models import gan

STEPS, EVERY, SAMPLES, PICTURES = 2000, 100, 2000, 8
BINS, EXTENT = 24, 3.0  # the histograms cover [-3, 3]^2
PICTURES_EN = (
    "non-saturating generator's samples over training "
    "(2-D histograms, left to right, then down)"
)
PICTURES_ZH = "非饱和损失下生成器的样本随训练的变化（二维直方图，从左到右，再往下）"


def histogram(samples: np.ndarray) -> np.ndarray:
    edges = np.linspace(-EXTENT, EXTENT, BINS + 1)
    h, _, _ = np.histogram2d(-samples[:, 1], samples[:, 0], bins=[edges, edges])
    return h  # rows from the top (y large) down, as an image is drawn


def train(loss: str, steps: int, every: int, cfg) -> tuple[list, list, list]:
    model = gan.GAN(cfg, gan.init(cfg, 0), loss)
    rng = np.random.default_rng(0)  # the same batches and noise for both losses
    fixed = gan.noise(np.random.default_rng(1), SAMPLES, cfg.z)
    covered, quality, pictures = [], [], []
    keep = set(np.linspace(every, steps, PICTURES).round().astype(int) // every * every)
    for step in range(1, steps + 1):
        model.d_step(gan.ring(rng, cfg.batch), gan.noise(rng, cfg.batch, cfg.z))
        model.g_step(gan.noise(rng, cfg.batch, cfg.z))
        if step % every == 0:
            s = model.sample(fixed)
            m, q = gan.modes_covered(s)
            covered.append(m)
            quality.append(100 * q)
            if step in keep:
                pictures.append(histogram(s).ravel().tolist())
    return covered, quality, pictures


def run(quick: bool) -> dict:
    cfg = gan.RING
    steps, every = STEPS, EVERY
    if quick:  # a check that the code runs: a few steps on a small batch
        cfg, steps, every = gan.Config("ring", z=16, batch=32, lr=1e-3), 4, 2
    ns, ns_q, pictures = train("non-saturating", steps, every, cfg)
    sat, sat_q, _ = train("saturating", steps, every, cfg)
    return {
        "kind": "lines",
        "x": {"label": "training step", "values": list(range(every, steps + 1, every))},
        "y": {"label": "modes covered (of 8)", "format": "{:.0f}"},
        "series": {
            "non-saturating loss": ns,
            "saturating loss": sat,
        },
        "images": {
            "label": PICTURES_EN,
            "shape": [BINS, BINS],
            "values": pictures,
        },
        "notes": {
            "steps": steps,
            "ns_final": ns[-1],
            "ns_most": max(ns),
            "ns_quality": ns_q[-1],
            "sat_final": sat[-1],
            "sat_most": max(sat),
            "sat_quality": sat_q[-1],
        },
    }


EXPERIMENT = Experiment(
    name="a13-ring",
    title={
        "zh": "八个高斯分布围成的环：生成器覆盖了几个模式（两种生成器损失）",
        "en": "A ring of eight Gaussians: modes the generator covers, two losses",
    },
    run=run,
    families=gan.FAMILIES,
    files=gan.FILES,
    notes={
        "steps": Note("训练步数", "training steps", "{:,.0f}"),
        "ns_final": Note(
            "非饱和损失：最后覆盖的模式数", "non-saturating: modes at the end", "{:.0f}"
        ),
        "ns_most": Note(
            "非饱和损失：训练中最多覆盖的模式数",
            "non-saturating: most modes at any point",
            "{:.0f}",
        ),
        "ns_quality": Note(
            "非饱和损失：最后落在某个模式 3σ 内的样本 (%)",
            "non-saturating: samples within 3 sigma of a mode at the end (%)",
            "{:.1f}",
        ),
        "sat_final": Note(
            "饱和损失：最后覆盖的模式数", "saturating: modes at the end", "{:.0f}"
        ),
        "sat_most": Note(
            "饱和损失：训练中最多覆盖的模式数",
            "saturating: most modes at any point",
            "{:.0f}",
        ),
        "sat_quality": Note(
            "饱和损失：最后落在某个模式 3σ 内的样本 (%)",
            "saturating: samples within 3 sigma of a mode at the end (%)",
            "{:.1f}",
        ),
    },
    zh={
        "training step": "训练步",
        "modes covered (of 8)": "覆盖的模式数（共 8 个）",
        "non-saturating loss": "非饱和损失",
        "saturating loss": "饱和损失",
        PICTURES_EN: PICTURES_ZH,
    },
)
