"""A13: a DCGAN on the 8 x 8 digits, its generator upsampling with B11's input
gradient of a convolution (the transposed convolution). First A6's LeNet-5 is
trained on the real digits; then, as the GAN trains, it classifies 1,000 samples
from fixed noise: its mean confidence (the largest softmax probability, averaged:
a stand-in for quality) and how evenly the samples spread over the ten classes
(the entropy of the class histogram as a share of log 10: a stand-in for
diversity). Both are measured on real held-out digits too, for scale. This is not
an FID: no feature statistics are compared, only one small classifier's verdicts,
which a generator can satisfy with digit-shaped noise that fools LeNet."""

from __future__ import annotations

import numpy as np

from thousand.experiments import Experiment, Note
from thousand.models import gan, lenet, mlp
from thousand.models.data import as_images, digits

STEPS, EVERY, SAMPLES, LENET_EPOCHS = 2000, 100, 1000, 10
SHEETS, PER_SHEET = 8, 4  # pictures over training, each 4 x 4 samples
LENET_FAMILIES = (  # the judge's kernels beyond the GAN's
    "conv2d",
    "conv2d_backward_data",
    "conv2d_backward_filter",
    "avg_pool",
    "avg_pool_backward",
    "sgd",
)
SHEETS_EN = "16 samples from the same noise over training (left to right, then down)"
SHEETS_ZH = "同一组噪声生成的 16 个样本随训练的变化（从左到右，再往下）"


def judge(net, images01: np.ndarray) -> tuple[float, float, np.ndarray]:
    """LeNet's mean confidence (%), the class histogram's entropy as a share of
    log 10 (%), and the histogram (shares of the samples per digit)."""
    Z = net.logits(as_images(images01.reshape(-1, 64))).astype(np.float64)
    p = np.exp(Z - Z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    share = np.bincount(p.argmax(axis=1), minlength=10) / len(p)
    nz = share[share > 0]
    return (
        100 * float(p.max(axis=1).mean()),
        100 * float(-(nz * np.log(nz)).sum() / np.log(10)),
        share,
    )


def sheet(samples: np.ndarray) -> list:
    """PER_SHEET^2 samples (in [-1, 1]) tiled with one-pixel gaps of 0."""
    n, side = PER_SHEET, 8 * PER_SHEET + PER_SHEET - 1
    out = np.zeros((side, side))
    for k in range(n * n):
        r, c = divmod(k, n)
        out[9 * r : 9 * r + 8, 9 * c : 9 * c + 8] = samples[k].reshape(8, 8)
    return out.ravel().tolist()


def run(quick: bool) -> dict:
    X_train, X_test, y_train, y_test = digits()
    cfg, steps, every, epochs, n = gan.DIGITS, STEPS, EVERY, LENET_EPOCHS, SAMPLES
    if quick:  # a check that the code runs: tiny batches, a few steps
        cfg, steps, every, epochs, n = gan.Config("digits", 32, 8, 2e-3), 4, 2, 1, 16
        X_train, y_train, X_test, y_test = (
            X_train[:64],
            y_train[:64],
            X_test[:32],
            y_test[:32],
        )
    judge_net = lenet.network(seed=0)
    s = lenet.SETTINGS
    mlp.fit(
        judge_net,
        as_images(X_train),
        y_train,
        epochs=epochs,
        batch=s["batch"],
        lr=s["lr"],
        decay=s["decay"],
        seed=0,
    )
    accuracy = 100 * mlp.accuracy(judge_net, as_images(X_test), y_test)
    real_conf, real_div, _ = judge(judge_net, X_test)

    model = gan.GAN(cfg, gan.init(cfg, 0), "non-saturating")
    real = X_train * 2 - 1  # pixels in [-1, 1], as tanh gives them
    rng = np.random.default_rng(0)
    fixed = gan.noise(np.random.default_rng(1), n, cfg.z)
    conf, div, sheets, share = [], [], [], None
    keep = set(np.linspace(every, steps, SHEETS).round().astype(int) // every * every)
    for step in range(1, steps + 1):
        batch = real[rng.integers(0, len(real), cfg.batch)]
        model.d_step(batch, gan.noise(rng, cfg.batch, cfg.z))
        model.g_step(gan.noise(rng, cfg.batch, cfg.z))
        if step % every == 0:
            samples = model.sample(fixed)  # (n, 8, 8, 1) in [-1, 1]
            c, d, share = judge(judge_net, (samples + 1) / 2)
            conf.append(c)
            div.append(d)
            if step in keep:
                sheets.append(sheet(samples[: PER_SHEET**2]))
    return {
        "kind": "lines",
        "x": {"label": "training step", "values": list(range(every, steps + 1, every))},
        "y": {"label": "%", "format": "{:.1f}"},
        "series": {
            "LeNet's mean confidence": conf,
            "class spread (entropy / log 10)": div,
        },
        "images": {
            "label": SHEETS_EN,
            "shape": [8 * PER_SHEET + PER_SHEET - 1] * 2,
            "values": sheets,
        },
        "notes": {
            "steps": steps,
            "lenet_accuracy": accuracy,
            "real_confidence": real_conf,
            "real_spread": real_div,
            "confidence": conf[-1],
            "spread": div[-1],
            **{f"share_{k}": 100 * float(share[k]) for k in range(10)},
        },
    }


EXPERIMENT = Experiment(
    name="a13-dcgan",
    title={
        "zh": "digits 上的 DCGAN：LeNet-5 眼中的样本质量与多样性",
        "en": "A DCGAN on the digits: quality and spread as LeNet-5 judges them",
    },
    run=run,
    families=(*gan.FAMILIES, *LENET_FAMILIES),
    files=(*gan.FILES, "models/lenet.py", "models/mlp.py", "models/data.py"),
    notes={
        "steps": Note("训练步数", "training steps", "{:,.0f}"),
        "lenet_accuracy": Note(
            "LeNet-5 在留出的真实数字上的准确率 (%)",
            "LeNet-5's accuracy on held-out real digits (%)",
            "{:.1f}",
        ),
        "real_confidence": Note(
            "真实留出数字上的平均置信度 (%)",
            "mean confidence on real held-out digits (%)",
            "{:.1f}",
        ),
        "real_spread": Note(
            "真实留出数字的类别分布熵 / log 10 (%)",
            "class spread of real held-out digits (%)",
            "{:.1f}",
        ),
        "confidence": Note(
            "最后的生成样本：平均置信度 (%)",
            "generated samples at the end: mean confidence (%)",
            "{:.1f}",
        ),
        "spread": Note(
            "最后的生成样本：类别分布熵 / log 10 (%)",
            "generated samples at the end: class spread (%)",
            "{:.1f}",
        ),
        **{
            f"share_{k}": Note(
                f"最后的生成样本中被判为 {k} 的比例 (%)",
                f"generated samples at the end classified as {k} (%)",
                "{:.1f}",
            )
            for k in range(10)
        },
    },
    zh={
        "training step": "训练步",
        "%": "%",
        "LeNet's mean confidence": "LeNet 的平均置信度",
        "class spread (entropy / log 10)": "类别分布（熵 / log 10）",
        SHEETS_EN: SHEETS_ZH,
    },
)
