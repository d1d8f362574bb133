"""A5: a restricted Boltzmann machine trained by contrastive divergence (CD-1,
Hinton 2002), on the kernels, with its NumPy twin.

Visible units v (the pixels of a binarised digit), hidden units h, weights W
(n_visible x n_hidden), biases a (visible) and b (hidden); the energy is
E(v, h) = -a.v - b.h - v^T W h. One CD-1 step on a batch:
    ph  = sigmoid(v W + b)           hidden probabilities given the data
    h   ~ Bernoulli(ph)              a sample of them
    pv  = sigmoid(h W^T + a)         the reconstruction
    ph' = sigmoid(pv W + b)
    W  += lr/m (v^T ph - pv^T ph'),  a += lr/m sum(v - pv),  b += lr/m sum(ph - ph')

python -m thousand.models.rbm
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import synchronize, to_device
from thousand.kernels.bernoulli import bernoulli
from thousand.kernels.bias_sigmoid import bias_sigmoid
from thousand.kernels.col_sum import col_sum
from thousand.kernels.matmul import matmul
from thousand.kernels.sgd import sgd
from thousand.kernels.transpose import transpose
from thousand.models.layers import Buffers


def init(n_visible: int, n_hidden: int, seed: int):
    """Small random weights (N(0, 0.01^2), Hinton's guide), biases 0."""
    rng = np.random.default_rng(seed)
    W = (rng.standard_normal((n_visible, n_hidden)) * 0.01).astype(np.float32)
    return W, np.zeros(n_visible, np.float32), np.zeros(n_hidden, np.float32)


# --8<-- [start:cd1]
class RBM:
    """An RBM on the device; every step is the package's kernels."""

    def __init__(self, W, a, b):
        self.W, self.a, self.b = to_device(W), to_device(a), to_device(b)
        self.buf = Buffers()
        self.up = to_device(np.zeros(1, np.float32))  # -lr/m: sgd adds
        self.down = to_device(np.zeros(1, np.float32))  # +lr/m: sgd subtracts

    def hidden(self, v, name):
        """sigmoid(v W + b)"""
        out = self.buf(name, (v.shape[0], self.W.shape[1]))
        return bias_sigmoid(matmul(v, self.W, out=out), self.b, out=out)

    def visible(self, h):
        """sigmoid(h W^T + a)"""
        WT = transpose(self.W, out=self.buf("WT", self.W.shape[::-1]))
        out = self.buf("pv", (h.shape[0], self.W.shape[0]))
        return bias_sigmoid(matmul(h, WT, out=out), self.a, out=out)

    def cd1_step(self, V: np.ndarray, U: np.ndarray, lr: float):
        """One CD-1 step on the batch V (m x n_visible, 0/1), with U the uniforms
        (m x n_hidden) that sample the hidden units."""
        m = V.shape[0]
        v = self.buf("v", V.shape)
        v.set(V)
        u = self.buf("u", U.shape)
        u.set(U)
        ph = self.hidden(v, "ph")
        h = bernoulli(ph, u, out=self.buf("h", ph.shape))
        pv = self.visible(h)
        ph2 = self.hidden(pv, "ph2")
        self.up.set(np.array([-lr / m], np.float32))
        self.down.set(np.array([lr / m], np.float32))
        # the data's statistics pull the parameters up, the reconstruction's down
        for x, hx, rate in ((v, ph, self.up), (pv, ph2, self.down)):
            xT = transpose(x, out=self.buf("xT", x.shape[::-1]))
            outer = matmul(xT, hx, out=self.buf("outer", self.W.shape))  # x^T h
            sgd(self.W, outer, rate, out=self.W)
            sgd(self.a, col_sum(x, out=self.buf("sa", self.a.shape)), rate, out=self.a)
            sgd(self.b, col_sum(hx, out=self.buf("sb", self.b.shape)), rate, out=self.b)

    # --8<-- [end:cd1]

    def reconstruct(self, V: np.ndarray) -> np.ndarray:
        """The mean-field reconstruction sigmoid(sigmoid(V W + b) W^T + a)."""
        v = self.buf("v_eval", V.shape)
        v.set(V)
        return self.visible(self.hidden(v, "ph_eval")).get()

    def get_params(self):
        return self.W.get(), self.a.get(), self.b.get()


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


class RBMTwin:
    """The same steps in NumPy (float32 by default)."""

    def __init__(self, W, a, b, dtype=np.float32):
        self.W, self.a, self.b = (x.astype(dtype) for x in (W, a, b))
        self.dtype = dtype

    def cd1_step(self, V, U, lr):
        m = V.shape[0]
        v = V.astype(self.dtype)
        ph = _sigmoid(v @ self.W + self.b)
        h = (U < ph).astype(self.dtype)
        pv = _sigmoid(h @ self.W.T + self.a)
        ph2 = _sigmoid(pv @ self.W + self.b)
        rate = self.dtype(lr / m)
        self.W += rate * (v.T @ ph) - rate * (pv.T @ ph2)
        self.a += rate * v.sum(axis=0) - rate * pv.sum(axis=0)
        self.b += rate * ph.sum(axis=0) - rate * ph2.sum(axis=0)

    def reconstruct(self, V):
        return _sigmoid(_sigmoid(V @ self.W + self.b) @ self.W.T + self.a)

    def get_params(self):
        return self.W.copy(), self.a.copy(), self.b.copy()


# --8<-- [start:train]
def binary_digits():
    """The digits split of data.digits, each pixel on when it is darker than 8/16."""
    from thousand.models.data import digits

    X_train, X_test, y_train, y_test = digits()
    return (X_train > 0.5).astype(np.float32), (X_test > 0.5).astype(np.float32)


SETTINGS = {"n_hidden": 64, "epochs": 20, "batch": 20, "lr": 0.1}


def train(model, X, *, epochs, batch, lr, seed, X_test=None, log=None):
    """CD-1 over minibatches in an order drawn from `seed`; the uniforms for the
    hidden samples come from the same generator, so a kernel RBM and its twin see
    the same numbers. log(epoch, held-out reconstruction error) after each epoch."""
    rng = np.random.default_rng(seed)
    n_hidden = model.get_params()[2].shape[0]
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(X))
        for i in range(0, len(X), batch):
            rows = order[i : i + batch]
            U = rng.random((len(rows), n_hidden), dtype=np.float32)
            model.cd1_step(X[rows], U, lr)
        synchronize()
        if log is not None and X_test is not None:
            log(epoch, reconstruction_error(model, X_test))
    return model


# --8<-- [end:train]


def reconstruction_error(model, X: np.ndarray) -> float:
    """Mean squared difference between the pixels and their reconstruction."""
    return float(np.mean((model.reconstruct(X).astype(np.float64) - X) ** 2))


if __name__ == "__main__":
    X_train, X_test = binary_digits()
    s = SETTINGS
    rbm = RBM(*init(64, s["n_hidden"], seed=0))
    train(
        rbm,
        X_train,
        epochs=3,
        batch=s["batch"],
        lr=s["lr"],
        seed=0,
        X_test=X_test,
        log=lambda e, err: print(f"epoch {e}: reconstruction error {err:.4f}"),
    )
