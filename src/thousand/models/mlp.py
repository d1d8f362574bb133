"""A3/A4: multilayer perceptrons, trained by backpropagation with the kernels.

`init` draws the weights once; `network` builds the kernel network and `twin` the
NumPy one from the same weights, so the two can be run side by side. `fit` is the
one training loop both go through.

python -m thousand.models.mlp      (XOR, then a short run on the digits)
"""

from __future__ import annotations

import time

import numpy as np

from thousand.cuda import synchronize
from thousand.models import layers, twin
from thousand.models.data import XOR_X, XOR_Y, digits, one_hot


# --8<-- [start:init]
def init(sizes: list[int], seed: int, gain: float = 2.0):
    """Weights W ~ N(0, gain / fan_in) (He et al., 2015: gain 2 for ReLU, 1 for
    tanh), biases 0: the variance of the signal stays put from layer to layer."""
    rng = np.random.default_rng(seed)
    return [
        (
            (rng.standard_normal((n_in, n_out)) * np.sqrt(gain / n_in)).astype(
                np.float32
            ),
            np.zeros(n_out, np.float32),
        )
        for n_in, n_out in zip(sizes[:-1], sizes[1:], strict=True)
    ]


# --8<-- [end:init]


def activations(sizes: list[int], hidden: str) -> list[str]:
    """Every layer but the last has `hidden`; the last gives logits (linear)."""
    return [hidden] * (len(sizes) - 2) + ["linear"]


def network(sizes, hidden, seed, gain=2.0) -> layers.Network:
    acts = activations(sizes, hidden)
    return layers.Network(layers.dense_layers(init(sizes, seed, gain), acts))


def network_twin(sizes, hidden, seed, gain=2.0, dtype=np.float32) -> twin.Network:
    acts = activations(sizes, hidden)
    return twin.Network(twin.dense_layers(init(sizes, seed, gain), acts, dtype), dtype)


def accuracy(net, X: np.ndarray, labels: np.ndarray) -> float:
    return float(np.mean(net.logits(X).argmax(axis=1) == labels))


# --8<-- [start:fit]
def fit(
    net,
    X,
    labels,
    *,
    epochs,
    batch,
    lr,
    seed,
    decay=1.0,
    X_test=None,
    y_test=None,
    log=None,
):
    """Minibatch SGD on softmax cross-entropy, the learning rate lr * decay^(e - 1)
    in epoch e. The batches come in an order drawn from `seed`, the same for any
    network given the same seed. After each epoch `log(epoch, train_loss,
    test_accuracy)` is called when given. Returns the seconds spent in training
    steps (evaluation not counted; the device is synchronised before the clock
    stops)."""
    rng = np.random.default_rng(seed)
    classes = int(labels.max()) + 1
    T = one_hot(labels, classes)
    seconds = 0.0
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(X))
        start = time.perf_counter()
        for i in range(0, len(X), batch):
            rows = order[i : i + batch]
            net.train_step(X[rows], T[rows], lr * decay ** (epoch - 1))
        synchronize()
        seconds += time.perf_counter() - start
        if log is not None:
            acc = None if X_test is None else accuracy(net, X_test, y_test)
            log(epoch, net.mean_loss(X, T), acc)
    return seconds


# --8<-- [end:fit]


# --8<-- [start:xor]
XOR_SIZES, XOR_HIDDEN = [2, 4, 2], "tanh"  # two inputs, four tanh units, 2 classes


def xor(seed: int = 0, steps: int = 500, lr: float = 0.5, numpy: bool = False):
    """Full-batch gradient descent on XOR's four points; returns the network."""
    make = network_twin if numpy else network
    net = make(XOR_SIZES, XOR_HIDDEN, seed, gain=1.0)
    fit(net, XOR_X, XOR_Y, epochs=steps, batch=4, lr=lr, seed=seed)
    return net


# --8<-- [end:xor]


# --8<-- [start:digits]
DIGITS_SIZES, DIGITS_HIDDEN = [64, 128, 10], "relu"  # 8 x 8 pixels in, 10 digits out
DIGITS_SETTINGS = {"epochs": 30, "batch": 32, "lr": 0.1}
# --8<-- [end:digits]


if __name__ == "__main__":
    net = xor()
    print("XOR predictions:", net.logits(XOR_X).argmax(axis=1), "targets:", XOR_Y)
    X_train, X_test, y_train, y_test = digits()
    net = network(DIGITS_SIZES, DIGITS_HIDDEN, seed=0)
    fit(
        net,
        X_train,
        y_train,
        epochs=3,
        batch=32,
        lr=0.1,
        seed=0,
        X_test=X_test,
        y_test=y_test,
        log=lambda e, loss, acc: print(
            f"epoch {e}: loss {loss:.4f}, held-out {acc:.3f}"
        ),
    )
