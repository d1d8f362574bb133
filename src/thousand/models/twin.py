"""The NumPy twin of layers.py: the same network, the same steps, on the host.

In float32 it is the CPU baseline the GPU's training time is compared with; in
float64 it is the reference the gradient checks and the kernels' runs are judged
against.
"""

from __future__ import annotations

import numpy as np

FORWARD = {
    "linear": lambda z: z,
    "relu": lambda z: np.maximum(z, 0),
    "sigmoid": lambda z: 1 / (1 + np.exp(-z)),
    "tanh": np.tanh,
}
BACKWARD = {  # f'(Z) from Y = f(Z)
    "linear": lambda y: 1,
    "relu": lambda y: (y > 0).astype(y.dtype),
    "sigmoid": lambda y: y * (1 - y),
    "tanh": lambda y: 1 - y * y,
}


class Dense:
    def __init__(self, W, b, activation="linear", dtype=np.float32):
        self.W, self.b = W.astype(dtype), b.astype(dtype)
        self.activation = activation

    def forward(self, X):
        self.X = X
        self.Y = FORWARD[self.activation](X @ self.W + self.b)
        return self.Y

    def backward(self, G, need_dX=True):
        dZ = G * BACKWARD[self.activation](self.Y)
        self.grads = [self.X.T @ dZ, dZ.sum(axis=0)]
        return dZ @ self.W.T if need_dX else None

    def params(self):
        return [self.W, self.b]


class Conv2D:
    """NHWC convolution as a NumPy user writes it: the patches, then a matmul."""

    def __init__(self, K, b, activation="tanh", dtype=np.float32):
        self.K, self.b = K.astype(dtype), b.astype(dtype)
        self.activation = activation

    def forward(self, X):
        R, S, C, F = self.K.shape
        N, H, W, _ = X.shape
        P, Q = H - R + 1, W - S + 1
        windows = np.lib.stride_tricks.sliding_window_view(X, (R, S), axis=(1, 2))
        # (N, P, Q, C, R, S) -> one row (r, s, c) per output pixel
        self.cols = windows.transpose(0, 1, 2, 4, 5, 3).reshape(N * P * Q, R * S * C)
        Z = (self.cols @ self.K.reshape(R * S * C, F)).reshape(N, P, Q, F)
        self.X_shape = X.shape
        self.Y = FORWARD[self.activation](Z + self.b)
        return self.Y

    def backward(self, G, need_dX=True):
        R, S, C, F = self.K.shape
        N, H, W, _ = self.X_shape
        P, Q = H - R + 1, W - S + 1
        dZ = (G * BACKWARD[self.activation](self.Y)).reshape(N * P * Q, F)
        self.grads = [(self.cols.T @ dZ).reshape(self.K.shape), dZ.sum(axis=0)]
        if not need_dX:
            return None
        dcols = (dZ @ self.K.reshape(R * S * C, F).T).reshape(N, P, Q, R, S, C)
        dX = np.zeros(self.X_shape, dZ.dtype)
        for r in range(R):
            for s in range(S):
                dX[:, r : r + P, s : s + Q, :] += dcols[:, :, :, r, s, :]
        return dX

    def params(self):
        return [self.K, self.b]


class AvgPool:
    grads: list = []

    def forward(self, X):
        N, H, W, C = X.shape
        self.X_shape = X.shape
        P, Q = H // 2, W // 2
        return X[:, : 2 * P, : 2 * Q].reshape(N, P, 2, Q, 2, C).mean(axis=(2, 4))

    def backward(self, G, need_dX=True):
        dX = np.zeros(self.X_shape, G.dtype)
        up = np.repeat(np.repeat(G, 2, axis=1), 2, axis=2) / 4
        dX[:, : up.shape[1], : up.shape[2]] = up
        return dX

    def params(self):
        return []


class Flatten:
    grads: list = []

    def forward(self, X):
        self.X_shape = X.shape
        return X.reshape(X.shape[0], -1)

    def backward(self, G, need_dX=True):
        return G.reshape(self.X_shape)

    def params(self):
        return []


def dense_layers(params, activations, dtype=np.float32) -> list:
    return [
        Dense(W, b, a, dtype) for (W, b), a in zip(params, activations, strict=True)
    ]


def softmax_xent(Z, T):
    """Per-row losses and the gradient of their mean, with the max subtracted."""
    s = Z - Z.max(axis=1, keepdims=True)
    log_p = s - np.log(np.exp(s).sum(axis=1, keepdims=True))
    return -(T * log_p).sum(axis=1), (np.exp(log_p) - T) / Z.shape[0]


class Network:
    def __init__(self, layers, dtype=np.float32):
        self.layers, self.dtype = layers, dtype

    def forward(self, X):
        X = np.asarray(X, self.dtype)
        for layer in self.layers:
            X = layer.forward(X)
        return X

    def backward(self, X, T):
        loss, G = softmax_xent(self.forward(X), np.asarray(T, self.dtype))
        for i, layer in reversed(list(enumerate(self.layers))):
            G = layer.backward(G, need_dX=i > 0)
        return loss

    def train_step(self, X, T, lr):
        loss = self.backward(X, T)
        for layer in self.layers:
            for p, g in zip(layer.params(), layer.grads, strict=True):
                p -= self.dtype(lr) * g
        return loss

    def logits(self, X):
        return self.forward(X)

    def mean_loss(self, X, T):
        loss, _ = softmax_xent(self.forward(X), np.asarray(T, self.dtype))
        return float(loss.astype(np.float64).mean())

    def get_params(self):
        return [tuple(p.copy() for p in layer.params()) for layer in self.layers]

    def get_grads(self):
        return [tuple(g.copy() for g in layer.grads) for layer in self.layers]
