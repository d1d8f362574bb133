"""A6: LeNet-5 (LeCun et al., 1998) on the kernels, and its NumPy twin.

The layers as the paper draws them, on 32 x 32 inputs (the 8 x 8 digits scaled
up 3 x and centred, data.as_images): C1 six 5 x 5 convolutions, S2 2 x 2
subsampling, C3 sixteen 5 x 5 convolutions, S4 subsampling, C5 120 5 x 5
convolutions (each sees the whole 5 x 5 map), F6 84 units, then 10 outputs.

What differs from 1998: C3 sees all six maps (the paper wired each of its maps to
a subset, to save computation and break symmetry); the subsampling is a plain
average (the paper's had a trainable scale and bias); tanh is the plain one; the
outputs are logits for softmax cross-entropy instead of the paper's Euclidean RBF
units.

python -m thousand.models.lenet      (a short run on the digits)
"""

from __future__ import annotations

import numpy as np

from thousand.models import layers, twin
from thousand.models.data import as_images, digits
from thousand.models.mlp import accuracy, fit

# --8<-- [start:architecture]
# (kind, shape): a convolution's kernel is R x S x C x F, a dense layer's n_in x n_out
ARCHITECTURE = [
    ("conv", (5, 5, 1, 6)),  # C1: 32 x 32 x 1 -> 28 x 28 x 6
    ("pool", None),  # S2: -> 14 x 14 x 6
    ("conv", (5, 5, 6, 16)),  # C3: -> 10 x 10 x 16
    ("pool", None),  # S4: -> 5 x 5 x 16
    ("conv", (5, 5, 16, 120)),  # C5: -> 1 x 1 x 120
    ("flatten", None),  # -> 120
    ("dense", (120, 84)),  # F6
    ("dense", (84, 10)),  # output: one logit per digit
]
# SGD; the rate shrinks by 5% an epoch, so the last epochs settle instead of jumping
SETTINGS = {"epochs": 30, "batch": 32, "lr": 0.1, "decay": 0.95}
# --8<-- [end:architecture]


def init(seed: int) -> list:
    """LeCun's own rule for tanh: weights N(0, 1 / fan_in), biases 0."""
    rng = np.random.default_rng(seed)
    params = []
    for kind, shape in ARCHITECTURE:
        if kind in ("conv", "dense"):
            fan_in = int(np.prod(shape[:-1]))
            W = rng.standard_normal(shape) / np.sqrt(fan_in)
            params.append((W.astype(np.float32), np.zeros(shape[-1], np.float32)))
        else:
            params.append(())
    return params


def _activation(i: int) -> str:
    return "linear" if i == len(ARCHITECTURE) - 1 else "tanh"


# --8<-- [start:build]
def network(seed: int, version: int = 2) -> layers.Network:
    """LeNet-5 on the kernels; version 1 direct convolutions, 2 im2col + GEMM."""
    built = []
    for i, ((kind, _), p) in enumerate(zip(ARCHITECTURE, init(seed), strict=True)):
        if kind == "conv":
            built.append(layers.Conv2D(*p, _activation(i), version=version))
        elif kind == "pool":
            built.append(layers.AvgPool())
        elif kind == "flatten":
            built.append(layers.Flatten())
        else:
            built.append(layers.Dense(*p, _activation(i)))
    return layers.Network(built)


# --8<-- [end:build]


def network_twin(seed: int, dtype=np.float32) -> twin.Network:
    built = []
    for i, ((kind, _), p) in enumerate(zip(ARCHITECTURE, init(seed), strict=True)):
        if kind == "conv":
            built.append(twin.Conv2D(*p, _activation(i), dtype))
        elif kind == "pool":
            built.append(twin.AvgPool())
        elif kind == "flatten":
            built.append(twin.Flatten())
        else:
            built.append(twin.Dense(*p, _activation(i), dtype))
    return twin.Network(built, dtype)


def digit_images():
    """The digits split of data.digits, as 32 x 32 NHWC images."""
    X_train, X_test, y_train, y_test = digits()
    return as_images(X_train), as_images(X_test), y_train, y_test


if __name__ == "__main__":
    X_train, X_test, y_train, y_test = digit_images()
    net = network(seed=0)
    fit(
        net,
        X_train[:256],
        y_train[:256],
        epochs=2,
        batch=32,
        lr=0.1,
        seed=0,
        X_test=X_test,
        y_test=y_test,
        log=lambda e, loss, acc: print(
            f"epoch {e}: loss {loss:.4f}, held-out {acc:.3f}"
        ),
    )
    print(
        f"held-out accuracy after 2 short epochs: {accuracy(net, X_test, y_test):.3f}"
    )
