"""Layers on device arrays: every operation is one of the package's kernels.

A layer keeps its parameters on the device, remembers in `forward` what `backward`
needs, and leaves the gradients of its parameters in `grads`. Buffers are made once
per shape and reused, so a training step allocates nothing after the first.
The same code runs on the GPU and on the CPU backend.
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import empty, to_device
from thousand.kernels.avg_pool import avg_pool
from thousand.kernels.avg_pool_backward import avg_pool_backward
from thousand.kernels.bias_add import bias_add
from thousand.kernels.bias_relu import bias_relu
from thousand.kernels.bias_sigmoid import bias_sigmoid
from thousand.kernels.bias_tanh import bias_tanh
from thousand.kernels.col_sum import col_sum
from thousand.kernels.conv2d import conv2d
from thousand.kernels.conv2d_backward_data import conv2d_backward_data
from thousand.kernels.conv2d_backward_filter import conv2d_backward_filter
from thousand.kernels.matmul import matmul
from thousand.kernels.relu_backward import relu_backward
from thousand.kernels.sgd import sgd
from thousand.kernels.sigmoid_backward import sigmoid_backward
from thousand.kernels.softmax_xent import softmax_xent
from thousand.kernels.tanh_backward import tanh_backward
from thousand.kernels.transpose import transpose

# --8<-- [start:activations]
FORWARD = {  # Y = f(Z + b)
    "linear": bias_add,
    "relu": bias_relu,
    "sigmoid": bias_sigmoid,
    "tanh": bias_tanh,
}
BACKWARD = {  # dZ = G * f'(Z), computed from Y; linear passes G through
    "relu": relu_backward,
    "sigmoid": sigmoid_backward,
    "tanh": tanh_backward,
}
# --8<-- [end:activations]


class Buffers:
    """Device arrays by name, made once and made again only when the shape changes
    (the last batch of an epoch is smaller)."""

    def __init__(self):
        self._d: dict = {}

    def __call__(self, name: str, shape: tuple):
        d = self._d.get(name)
        if d is None or tuple(d.shape) != tuple(shape):
            d = self._d[name] = empty(shape, np.float32)
        return d


# --8<-- [start:dense]
class Dense:
    """Y = f(X W + b) for a batch X of shape (M, n_in); W is (n_in, n_out)."""

    def __init__(self, W: np.ndarray, b: np.ndarray, activation: str = "linear"):
        if activation not in FORWARD:
            raise ValueError(f"activation must be one of {sorted(FORWARD)}")
        self.W, self.b = to_device(W), to_device(b)
        self.activation = activation
        self.buf = Buffers()

    def forward(self, X):
        M, n_out = X.shape[0], self.W.shape[1]
        Y = self.buf("Y", (M, n_out))
        matmul(X, self.W, out=Y)  # Z = X W
        FORWARD[self.activation](Y, self.b, out=Y)  # Y = f(Z + b), in place
        self.X, self.Y = X, Y  # what backward needs
        return Y

    def backward(self, G, need_dX: bool = True):
        """G = dL/dY. Sets self.grads = [dL/dW, dL/db]; returns dL/dX."""
        (M, n_out), n_in = G.shape, self.W.shape[0]
        dZ = G
        if self.activation != "linear":
            dZ = BACKWARD[self.activation](G, self.Y, out=self.buf("dZ", (M, n_out)))
        XT = transpose(self.X, out=self.buf("XT", (n_in, M)))
        dW = matmul(XT, dZ, out=self.buf("dW", (n_in, n_out)))  # X^T dZ
        db = col_sum(dZ, out=self.buf("db", (n_out,)))  # b was added to each row
        self.grads = [dW, db]
        if not need_dX:
            return None
        WT = transpose(self.W, out=self.buf("WT", (n_out, n_in)))
        return matmul(dZ, WT, out=self.buf("dX", (M, n_in)))  # dZ W^T

    def params(self):
        return [self.W, self.b]


# --8<-- [end:dense]


class SoftmaxCrossEntropy:
    """The loss of a classifier: mean over rows of -sum_c T log softmax(Z)."""

    def __init__(self):
        self.buf = Buffers()

    def __call__(self, Z, T):
        """Returns (per-row losses, dL/dZ of the mean loss), both on the device."""
        loss = self.buf("loss", (Z.shape[0],))
        dZ = softmax_xent(Z, T, out=self.buf("dZ", Z.shape), loss=loss)
        return loss, dZ


# --8<-- [start:conv]
class Conv2D:
    """Y = f(conv2d(X, K) + b) on NHWC batches; K is R x S x C x F, b has F values.
    `version` picks the kernels: 1 direct, 2 im2col + GEMM (forward and backward)."""

    def __init__(self, K, b, activation="tanh", version: int = 2):
        if activation not in FORWARD:
            raise ValueError(f"activation must be one of {sorted(FORWARD)}")
        self.K, self.b = to_device(K), to_device(b)
        self.activation, self.version = activation, version
        self.buf = Buffers()

    def forward(self, X):
        (N, H, W, _), (R, S, _, F) = X.shape, self.K.shape
        Y = self.buf("Y", (N, H - R + 1, W - S + 1, F))
        conv2d(X, self.K, out=Y, version=self.version)
        FORWARD[self.activation](Y, self.b, out=Y)  # the bias per channel
        self.X, self.Y = X, Y
        return Y

    def backward(self, G, need_dX: bool = True):
        dZ = G
        if self.activation != "linear":
            dZ = BACKWARD[self.activation](G, self.Y, out=self.buf("dZ", G.shape))
        v = self.version
        dK = conv2d_backward_filter(
            self.X, dZ, out=self.buf("dK", self.K.shape), version=v
        )
        N, P, Q, F = dZ.shape
        db = col_sum(dZ.reshape(N * P * Q, F), out=self.buf("db", (F,)))
        self.grads = [dK, db]
        if not need_dX:
            return None
        dX = self.buf("dX", self.X.shape)
        return conv2d_backward_data(dZ, self.K, out=dX, version=v)

    def params(self):
        return [self.K, self.b]


class AvgPool:
    """2 x 2 average pooling, stride 2; no parameters."""

    def __init__(self):
        self.buf, self.grads = Buffers(), []

    def forward(self, X):
        N, H, W, C = X.shape
        self.X_shape = tuple(X.shape)
        return avg_pool(X, out=self.buf("Y", (N, H // 2, W // 2, C)))

    def backward(self, G, need_dX: bool = True):
        return avg_pool_backward(G, out=self.buf("dX", self.X_shape))

    def params(self):
        return []


class Flatten:
    """(N, ...) to (N, everything else): a new view of the same memory."""

    grads: list = []

    def forward(self, X):
        self.X_shape = tuple(X.shape)
        return X.reshape(X.shape[0], int(np.prod(X.shape[1:])))

    def backward(self, G, need_dX: bool = True):
        return G.reshape(self.X_shape)

    def params(self):
        return []


# --8<-- [end:conv]


def dense_layers(params, activations) -> list:
    return [Dense(W, b, a) for (W, b), a in zip(params, activations, strict=True)]


# --8<-- [start:network]
class Network:
    """Layers in a row, trained with softmax cross-entropy and plain SGD."""

    def __init__(self, layers: list):
        self.layers = layers
        self.loss = SoftmaxCrossEntropy()
        self.lr = to_device(np.zeros(1, np.float32))  # read by the sgd kernel
        self.buf = Buffers()

    def upload(self, name, a: np.ndarray):
        """Copy a host batch into a device buffer kept for it."""
        d = self.buf(name, a.shape)
        d.set(np.ascontiguousarray(a, dtype=np.float32))
        return d

    def forward(self, X):
        for layer in self.layers:
            X = layer.forward(X)
        return X  # the logits

    def backward(self, X: np.ndarray, T: np.ndarray):
        """Forward, loss, backward: leaves every layer's `grads`; returns the
        per-row losses (on the device)."""
        Z = self.forward(self.upload("X", X))
        loss, G = self.loss(Z, self.upload("T", T))
        for i, layer in reversed(list(enumerate(self.layers))):
            G = layer.backward(G, need_dX=i > 0)  # the input needs no gradient
        return loss

    def train_step(self, X: np.ndarray, T: np.ndarray, lr: float):
        """One step of SGD on a batch; returns the per-row losses (on the device)."""
        loss = self.backward(X, T)
        self.lr.set(np.array([lr], np.float32))
        for layer in self.layers:
            for p, g in zip(layer.params(), layer.grads, strict=True):
                sgd(p, g, self.lr, out=p)  # p -= lr * g, in place
        return loss

    # --8<-- [end:network]

    def logits(self, X: np.ndarray) -> np.ndarray:
        return self.forward(self.upload("X_eval", X)).get()

    def mean_loss(self, X: np.ndarray, T: np.ndarray) -> float:
        loss, _ = self.loss(self.forward(self.upload("X_eval", X)), self.upload("T", T))
        return float(loss.get().astype(np.float64).mean())

    def get_params(self) -> list[tuple]:
        """Each layer's parameters on the host (an empty tuple for a pool)."""
        return [tuple(p.get() for p in layer.params()) for layer in self.layers]

    def get_grads(self) -> list[tuple]:
        return [tuple(g.get() for g in layer.grads) for layer in self.layers]
