"""A2: Rosenblatt's perceptron (1958): the learning rule as a kernel.

Each epoch is one launch of the perceptron kernel (the samples in order); after it
the threshold kernel counts the samples the rule would still get wrong. The twin
runs the same epochs in NumPy. On separable data the rule stops making mistakes
after a bounded number of them (Novikoff, 1962); on XOR it never does.

python -m thousand.models.perceptron
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import to_device
from thousand.kernels.perceptron import perceptron, perceptron_ref
from thousand.kernels.threshold import threshold, threshold_ref


def signed_inputs(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Rows -y_i [x_i, 1]: the rule makes a mistake on sample i exactly when
    y_i (w . x_i + b) <= 0, that is when the threshold unit with weights [w, b] and
    threshold 0 fires on row i. One launch counts every mistake."""
    ones = np.ones((len(X), 1), np.float32)
    return (-y[:, None] * np.hstack([X, ones])).astype(np.float32)


# --8<-- [start:train]
def train(X: np.ndarray, y: np.ndarray, max_epochs: int = 100):
    """Train from w = 0 on the device; y holds -1 and +1. Returns the weights (the
    bias last), the mistakes the rule would make with the weights after each epoch,
    and whether they reached 0 (then no later epoch changes anything)."""
    n, d = X.shape
    dX, dy = to_device(X), to_device(y)
    d_signed, zero = to_device(signed_inputs(X, y)), to_device(np.zeros(1, np.float32))
    w = to_device(np.zeros(d + 1, np.float32))
    w_next = to_device(np.zeros(d + 1, np.float32))
    mistakes = []
    for _ in range(max_epochs):
        perceptron(dX, dy, w, out=w_next)  # one epoch, samples in order
        w, w_next = w_next, w
        mistakes.append(int(threshold(d_signed, w, zero).get().sum()))
        if mistakes[-1] == 0:
            return w.get(), mistakes, True
    return w.get(), mistakes, False


# --8<-- [end:train]


def train_numpy(X: np.ndarray, y: np.ndarray, max_epochs: int = 100):
    """The twin: the same epochs with the kernels' NumPy references."""
    w = np.zeros(X.shape[1] + 1)
    signed, zero = signed_inputs(X, y), np.zeros(1)
    mistakes = []
    for _ in range(max_epochs):
        w = perceptron_ref(X, y, w)
        mistakes.append(int(threshold_ref(signed, w, zero).sum()))
        if mistakes[-1] == 0:
            return w.astype(np.float32), mistakes, True
    return w.astype(np.float32), mistakes, False


if __name__ == "__main__":
    from thousand.models.data import XOR_X, XOR_Y, separable_points

    X, y, line = separable_points(seed=0)
    w, errors, converged = train(X, y)
    print(f"separable, line {line}: converged={converged}, mistakes {errors}, w={w}")
    y_xor = np.where(XOR_Y == 1, 1, -1).astype(np.float32)
    w, errors, converged = train(XOR_X, y_xor)
    print(f"XOR: converged={converged}, fewest mistakes {min(errors)}")
