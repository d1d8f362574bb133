"""Layers of the deep CNNs (A10 AlexNet and VGG, A11 ResNet) on device arrays.

The same contract as layers.py (forward remembers what backward needs, `grads`
after backward, buffers made once per shape) with what those networks add:
convolutions with padding and stride, max pooling, dropout, batch norm, global
average pooling and the residual block. Dropout and batch norm behave differently
in training and in evaluation, so every layer has a `training` flag that the
network sets (CNN.set_training); the rest ignore it.

Batch norm's statistics for evaluation. The kernels give each training step's
batch mean and 1/sqrt(var + eps) on the device; keeping a running average of the
variance would need an elementwise kernel the package does not have (1/x^2), or a
copy to the host every step. Instead, after training and before evaluating,
CNN.calibrate runs training batches forward with batch statistics and averages
them: the mean of the batch means and of the unbiased batch variances. This is
"precise BN" (Wu & Johnson 2021, Rethinking "Batch" in BatchNorm), and exactly what
PyTorch's BatchNorm does with momentum=None, so the twin does the same.
"""

from __future__ import annotations

import importlib

import numpy as np

from thousand.cuda import empty, synchronize, to_device
from thousand.kernels.conv_geometry import ConvGeometry
from thousand.models.layers import BACKWARD, FORWARD, Buffers, Network

EPS = 1e-5  # batch norm's epsilon, PyTorch's default


# name -> (module of thousand.kernels, function): imported when first used, so a
# network without batch norm needs none of batch norm's kernels
_WHERE = {
    "conv": ("conv", "conv"),
    "conv_backward_data": ("conv_backward_data", "conv_backward_data"),
    "conv_backward_filter": ("conv_backward_filter", "conv_backward_filter"),
    "max_pool": ("max_pool", "max_pool"),
    "PoolGeometry": ("max_pool", "PoolGeometry"),
    "max_pool_backward": ("max_pool_backward", "max_pool_backward"),
    "dropout": ("dropout", "dropout"),
    "dropout_backward": ("dropout", "dropout_backward"),
    "batch_norm": ("batch_norm", "batch_norm"),
    "batch_norm_inference": ("batch_norm_inference", "batch_norm_inference"),
    "batch_norm_backward": ("batch_norm_backward", "batch_norm_backward"),
    "global_avg_pool": ("global_avg_pool", "global_avg_pool"),
    "global_avg_pool_backward": (
        "global_avg_pool_backward",
        "global_avg_pool_backward",
    ),
    "add_relu": ("add_relu", "add_relu"),
}


def k(name: str):
    module, attr = _WHERE[name]
    return getattr(importlib.import_module(f"thousand.kernels.{module}"), attr)


class Layer:
    """What every layer here has: no parameters, a training flag."""

    training = True
    grads: list = []

    def params(self):
        return []

    def children(self):
        return []


# --8<-- [start:conv]
class Conv(Layer):
    """Y = f(conv(X, K) + b) with any ConvGeometry; K is R x S x C x F. Without a
    bias (b None) it is the plain convolution that feeds a batch norm, whose beta
    is the bias."""

    def __init__(self, K, b=None, geom=None, activation="linear", version=3):
        if activation not in FORWARD:
            raise ValueError(f"activation must be one of {sorted(FORWARD)}")
        if b is None and activation != "linear":
            raise ValueError("a convolution without a bias has no activation")
        self.K = to_device(np.ascontiguousarray(K, np.float32))
        self.b = None if b is None else to_device(np.asarray(b, np.float32))
        self.geom = ConvGeometry() if geom is None else geom
        self.activation, self.version = activation, version
        self.buf = Buffers()

    def forward(self, X):
        (N, H, W, _), (R, S, _, F) = X.shape, self.K.shape
        P, Q = self.geom.output_hw(H, W, R, S)
        Y = self.buf("Y", (N, P, Q, F))
        k("conv")(X, self.K, self.geom, out=Y, version=self.version)
        if self.b is not None:  # the bias per channel and f, in place
            FORWARD[self.activation](Y, self.b, out=Y)
        self.X, self.Y = X, Y
        return Y

    def backward(self, G, need_dX: bool = True):
        dZ = G
        if self.activation != "linear":
            dZ = BACKWARD[self.activation](G, self.Y, out=self.buf("dZ", G.shape))
        R, S = self.K.shape[:2]
        dK = self.buf("dK", self.K.shape)
        k("conv_backward_filter")(self.X, dZ, (R, S), self.geom, out=dK)
        self.grads = [dK]
        if self.b is not None:
            from thousand.kernels.col_sum import col_sum

            F = dZ.shape[-1]
            db = self.buf("db", (F,))
            self.grads.append(col_sum(dZ.reshape(-1, F), out=db))
        if not need_dX:
            return None
        H, W = self.X.shape[1:3]
        dX = self.buf("dX", self.X.shape)
        return k("conv_backward_data")(dZ, self.K, (H, W), self.geom, out=dX)

    def params(self):
        return [self.K] if self.b is None else [self.K, self.b]


# --8<-- [end:conv]


# --8<-- [start:batch_norm]
class BatchNorm(Layer):
    """Y = f(gamma (X - mean) / sqrt(var + eps) + beta) per channel (the last
    axis), with f linear or ReLU. Training normalises by the batch's statistics;
    evaluation by those CNN.calibrate measured. With ReLU, the kernel normalises
    with a zero beta and bias_relu adds beta and clips in one pass (as Conv2D's
    bias and tanh)."""

    def __init__(self, channels: int, activation: str = "relu"):
        if activation not in ("linear", "relu"):
            raise ValueError("batch norm's activation is 'linear' or 'relu'")
        self.gamma = to_device(np.ones(channels, np.float32))
        self.beta = to_device(np.zeros(channels, np.float32))
        self.zero = to_device(np.zeros(channels, np.float32))  # beta, later
        self.mean = empty((channels,), np.float32)  # of the last training batch
        self.invstd = empty((channels,), np.float32)
        self.running_mean = to_device(np.zeros(channels, np.float32))
        self.running_var = to_device(np.ones(channels, np.float32))
        self.activation = activation
        self.collected: list | None = None  # batch statistics while calibrating
        self.buf = Buffers()

    def forward(self, X):
        Y = self.buf("Y", X.shape)
        relu = self.activation == "relu"
        beta = self.zero if relu else self.beta
        if self.training or self.collected is not None:
            k("batch_norm")(
                X, self.gamma, beta, EPS, out=Y, mean=self.mean, invstd=self.invstd
            )
            if self.collected is not None:  # calibrating: keep this batch's
                rows = int(np.prod(X.shape[:-1]))
                self.collected.append((rows, self.mean.get(), self.invstd.get()))
        else:
            k("batch_norm_inference")(
                X, self.gamma, beta, self.running_mean, self.running_var, EPS, out=Y
            )
        if relu:
            FORWARD["relu"](Y, self.beta, out=Y)  # relu(. + beta), in place
        self.X, self.Y = X, Y
        return Y

    def backward(self, G, need_dX: bool = True):
        dZ = G
        if self.activation == "relu":
            dZ = BACKWARD["relu"](G, self.Y, out=self.buf("dZ", G.shape))
        C = self.gamma.shape[0]
        dgamma, dbeta = self.buf("dgamma", (C,)), self.buf("dbeta", (C,))
        dX = self.buf("dX", self.X.shape)
        # dbeta = sum of dZ: beta's gradient whether the kernel or bias_relu added it
        k("batch_norm_backward")(
            dZ,
            self.X,
            self.gamma,
            self.mean,
            self.invstd,
            out=dX,
            dgamma=dgamma,
            dbeta=dbeta,
        )
        self.grads = [dgamma, dbeta]
        return dX

    def params(self):
        return [self.gamma, self.beta]

    def finish_calibration(self):
        """Running statistics = the average of the batches' means and unbiased
        variances (float64 on the host: a handful of numbers per batch)."""
        rows = np.array([n for n, _, _ in self.collected], np.float64)
        means = np.array([m for _, m, _ in self.collected], np.float64)
        invstd = np.array([s for _, _, s in self.collected], np.float64)
        biased = 1.0 / invstd**2 - EPS
        unbiased = biased * (rows / (rows - 1))[:, None]
        self.running_mean.set(means.mean(axis=0).astype(np.float32))
        self.running_var.set(unbiased.mean(axis=0).astype(np.float32))
        self.collected = None


# --8<-- [end:batch_norm]


class MaxPool(Layer):
    """Max over window x window patches, `stride` apart (AlexNet's overlapping 3/2,
    VGG's 2/2); the argmax of each output is kept for the backward."""

    def __init__(self, window: int = 2, stride: int = 2):
        self.geom = k("PoolGeometry")(window=window, stride=stride, pad=0)
        self.window, self.stride = window, stride
        self.buf = Buffers()
        self.index: dict = {}

    def out_hw(self, H, W):
        return (
            (H - self.window) // self.stride + 1,
            (W - self.window) // self.stride + 1,
        )

    def forward(self, X):
        N, H, W, C = X.shape
        P, Q = self.out_hw(H, W)
        Y = self.buf("Y", (N, P, Q, C))
        argmax = self.index.get((N, P, Q, C))
        if argmax is None:  # int32 indices, made once per shape
            argmax = self.index[(N, P, Q, C)] = empty((N, P, Q, C), np.int32)
        k("max_pool")(X, self.geom, out=Y, argmax=argmax)
        self.X_shape, self.argmax = tuple(X.shape), argmax
        return Y

    def backward(self, G, need_dX: bool = True):
        dX = self.buf("dX", self.X_shape)
        hw = self.X_shape[1:3]
        return k("max_pool_backward")(G, self.argmax, hw, self.geom, out=dX)


class Dropout(Layer):
    """In training, each unit is zeroed with probability p and the rest scaled by
    1 / (1 - p) (inverted dropout: evaluation passes X through). The mask comes from
    a counter-based generator: (seed, offset) fixes it, and the offset moves on by
    the batch's size every step, so each step draws a new one."""

    def __init__(self, p: float, seed: int):
        if not 0 <= p < 1:
            raise ValueError(f"dropout's p must be in [0, 1), not {p}")
        self.p, self.seed = float(p), int(seed)
        self.counter = 0  # numbers drawn so far
        self.buf = Buffers()

    def forward(self, X):
        if not self.training or self.p == 0:
            self.offset = None
            return X
        self.offset = self.counter
        self.counter += int(np.prod(X.shape))
        Y = self.buf("Y", X.shape)
        return k("dropout")(X, self.p, self.seed, self.offset, out=Y)

    def backward(self, G, need_dX: bool = True):
        if self.offset is None:
            return G
        dX = self.buf("dX", G.shape)
        return k("dropout_backward")(G, self.p, self.seed, self.offset, out=dX)


class GlobalAvgPool(Layer):
    """(N, H, W, C) to (N, C): each channel's mean over the image."""

    def __init__(self):
        self.buf = Buffers()

    def forward(self, X):
        N, H, W, C = X.shape
        self.X_shape = tuple(X.shape)
        return k("global_avg_pool")(X, out=self.buf("Y", (N, C)))

    def backward(self, G, need_dX: bool = True):
        hw = self.X_shape[1:3]
        return k("global_avg_pool_backward")(G, hw, out=self.buf("dX", self.X_shape))


class Flatten(Layer):
    """(N, ...) to (N, everything else): a view of the same memory."""

    def forward(self, X):
        self.X_shape = tuple(X.shape)
        return X.reshape(X.shape[0], int(np.prod(X.shape[1:])))

    def backward(self, G, need_dX: bool = True):
        return G.reshape(self.X_shape)


class Dense(Layer):
    """layers.Dense with a training flag (it has no use for it)."""

    def __init__(self, W, b, activation="linear"):
        from thousand.models.layers import Dense as _Dense

        self.inner = _Dense(W, b, activation)

    def forward(self, X):
        return self.inner.forward(X)

    def backward(self, G, need_dX: bool = True):
        dX = self.inner.backward(G, need_dX)
        self.grads = self.inner.grads
        return dX

    def params(self):
        return self.inner.params()


# --8<-- [start:residual]
class Residual(Layer):
    """Y = relu(body(X) + shortcut(X)): the block of He et al. (2015). The body
    ends in a linear batch norm; the shortcut is X itself (identity) or a 1 x 1
    convolution with batch norm (projection) where the shape changes or by choice.
    In backward the gradient splits at the sum and adds up again at X."""

    def __init__(self, body: list, shortcut: list | None = None):
        self.body, self.shortcut = body, shortcut or []
        self.buf = Buffers()

    def children(self):
        return self.body + self.shortcut

    def forward(self, X):
        A = X
        for layer in self.body:
            A = layer.forward(A)
        S = X
        for layer in self.shortcut:
            S = layer.forward(S)
        self.Y = k("add_relu")(A, S, out=self.buf("Y", A.shape))
        self.X_shape = tuple(X.shape)
        return self.Y

    def backward(self, G, need_dX: bool = True):
        from thousand.kernels.vector_add import vector_add

        # relu's gradient once, then the same dA flows down both paths
        dA = BACKWARD["relu"](G, self.Y, out=self.buf("dA", G.shape))
        dX_body = dA
        for layer in reversed(self.body):
            dX_body = layer.backward(dX_body, need_dX=True)
        dX_short = dA
        for layer in reversed(self.shortcut):
            dX_short = layer.backward(dX_short, need_dX=True)
        dX = self.buf("dX", self.X_shape)
        n = int(np.prod(self.X_shape))
        vector_add(dX_body.reshape(n), dX_short.reshape(n), out=dX.reshape(n))
        return dX

    @property
    def grads(self):
        return [g for layer in self.children() for g in layer.grads]

    def params(self):
        return [p for layer in self.children() for p in layer.params()]


# --8<-- [end:residual]


def walk(layer_list):
    """Every layer, the blocks' own layers included."""
    for layer in layer_list:
        yield layer
        yield from walk(layer.children())


# --8<-- [start:network]
class CNN(Network):
    """layers.Network (softmax cross-entropy, plain SGD) whose layers know whether
    they train or evaluate. Evaluation comes in batches of the training batch's
    size (the last padded), so no buffer is ever made again for another shape."""

    def __init__(self, layer_list: list, batch: int):
        super().__init__(layer_list)
        self.batch = batch
        self.batch_norms = [x for x in walk(layer_list) if isinstance(x, BatchNorm)]
        self.calibrated = not self.batch_norms

    def set_training(self, training: bool):
        for layer in walk(self.layers):
            layer.training = training

    def backward(self, X, T):
        self.set_training(True)
        self.calibrated = not self.batch_norms  # the weights move on
        return super().backward(X, T)

    def calibrate(self, X: np.ndarray, batches: int = 8):
        """Batch norm's statistics for evaluation, from the first `batches` full
        batches of X (in order) run forward with batch statistics."""
        self.set_training(False)
        if not self.batch_norms:
            return
        for bn in self.batch_norms:
            bn.collected = []
        n = min(batches, len(X) // self.batch)
        if n < 1:
            raise ValueError(f"calibrate needs at least one batch of {self.batch}")
        for i in range(n):
            self.forward(self.upload("X", X[i * self.batch : (i + 1) * self.batch]))
        for bn in self.batch_norms:
            bn.finish_calibration()
        self.calibrated = True

    def logits(self, X: np.ndarray) -> np.ndarray:
        if not self.calibrated:
            raise RuntimeError("batch norm is not calibrated: call calibrate(X)")
        self.set_training(False)
        out = []
        for i in range(0, len(X), self.batch):
            chunk = X[i : i + self.batch]
            pad = self.batch - len(chunk)  # evaluation is per image: zeros are inert
            if pad:
                chunk = np.concatenate([chunk, np.zeros((pad, *X.shape[1:]), X.dtype)])
            out.append(self.forward(self.upload("X", chunk)).get()[: len(chunk) - pad])
        return np.concatenate(out)

    def mean_loss(self, X: np.ndarray, T: np.ndarray) -> float:
        """The mean cross-entropy in evaluation mode (float64, on the host)."""
        Z = self.logits(X).astype(np.float64)
        Z -= Z.max(axis=1, keepdims=True)
        log_p = Z - np.log(np.exp(Z).sum(axis=1, keepdims=True))
        return float(-(T * log_p).sum(axis=1).mean())

    def sync(self):
        synchronize()

    def flat_params(self) -> list[np.ndarray]:
        """Every parameter on the host, in the order of the layers (blocks inside
        out): the order the twin lists its own in."""
        return [p.get() for layer in self.layers for p in layer.params()]


# --8<-- [end:network]


def count_params(layer_list) -> int:
    return sum(int(np.prod(p.shape)) for layer in layer_list for p in layer.params())
