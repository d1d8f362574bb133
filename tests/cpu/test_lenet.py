"""A6 on the CPU backend: the convolution and pooling layers' backward passes against
float64 finite differences (both kernel versions), a small convolutional network's
gradients end to end, and LeNet-5's steps against its NumPy twin.

Finite differences as in test_models.py: central, eps = 1e-6, in float64 on the
twin; the kernels compute in float32 (errors near 1e-7, bounds ten times that).
"""

import numpy as np
import pytest

from tests.cpu.test_models import GRAD_TOL, fd_grad, rel
from thousand.cuda import to_device
from thousand.models import layers, lenet, mlp, twin
from thousand.models.data import as_images, one_hot

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("activation", ["linear", "tanh"])
def test_conv_backward_matches_finite_differences(version, activation):
    """L = sum(R * f(conv2d(X, K) + b)), through the convolution's two backward
    kernels, the activation's, and col_sum for the bias."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((2, 6, 7, 2)).astype(np.float32)
    K = (rng.standard_normal((3, 2, 2, 3)) / 3).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    R = rng.standard_normal((2, 4, 6, 3)).astype(np.float32)
    layer = layers.Conv2D(K, b, activation, version=version)
    Y = layer.forward(to_device(X))
    dX = layer.backward(to_device(R)).get()
    dK, db = (g.get() for g in layer.grads)

    X64, K64, b64 = (a.astype(np.float64) for a in (X, K, b))
    ref = twin.Conv2D(K64, b64, activation, np.float64)
    ref.K, ref.b = K64, b64  # the arrays the differences move

    def loss():
        return float((R * ref.forward(X64)).sum())

    assert rel(Y.get(), ref.forward(X64)) < 1e-6
    assert rel(dX, fd_grad(loss, X64)) < GRAD_TOL
    assert rel(dK, fd_grad(loss, K64)) < GRAD_TOL
    assert rel(db, fd_grad(loss, b64)) < GRAD_TOL


def test_avg_pool_backward_matches_finite_differences_odd_sizes_too():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((2, 5, 6, 3)).astype(np.float32)  # 5 rows: one left out
    R = rng.standard_normal((2, 2, 3, 3)).astype(np.float32)
    pool = layers.AvgPool()
    Y = pool.forward(to_device(X))
    dX = pool.backward(to_device(R)).get()
    X64 = X.astype(np.float64)
    ref = twin.AvgPool()

    def loss():
        return float((R * ref.forward(X64)).sum())

    assert rel(Y.get(), ref.forward(X64)) < 1e-6
    assert rel(dX, fd_grad(loss, X64)) < GRAD_TOL
    assert np.all(dX[:, 4] == 0)  # the row the pooling never saw


@pytest.mark.parametrize("version", [1, 2])
def test_small_conv_network_gradients_match_finite_differences(version):
    """conv -> pool -> flatten -> dense, through the mean cross-entropy."""
    rng = np.random.default_rng(6)
    K = (rng.standard_normal((3, 3, 1, 2)) / 3).astype(np.float32)
    bk = rng.standard_normal(2).astype(np.float32) / 4
    W = (rng.standard_normal((8, 3)) / 3).astype(np.float32)
    bw = rng.standard_normal(3).astype(np.float32) / 4
    X = rng.standard_normal((3, 6, 6, 1)).astype(np.float32)
    T = one_hot(np.array([0, 2, 1]), 3)
    net = layers.Network(
        [
            layers.Conv2D(K, bk, "tanh", version=version),
            layers.AvgPool(),
            layers.Flatten(),
            layers.Dense(W, bw, "linear"),
        ]
    )
    net.backward(X, T)
    f64 = np.float64
    ref = twin.Network(
        [
            twin.Conv2D(K, bk, "tanh", f64),
            twin.AvgPool(),
            twin.Flatten(),
            twin.Dense(W, bw, "linear", f64),
        ],
        f64,
    )
    for layer, grads in zip(ref.layers, net.get_grads(), strict=True):
        for p, g in zip(layer.params(), grads, strict=True):
            assert rel(g, fd_grad(lambda: ref.mean_loss(X, T), p)) < GRAD_TOL


@pytest.mark.parametrize("version", [1, 2])
def test_lenet_steps_agree_with_the_numpy_twin(version):
    """Three SGD steps on 12 digits, from the same weights in the same order."""
    rng = np.random.default_rng(0)
    X = as_images(rng.random((12, 64)).astype(np.float32))
    y = np.arange(12) % 10
    net = lenet.network(seed=1, version=version)
    ref = lenet.network_twin(seed=1)
    for n in (net, ref):
        mlp.fit(n, X, y, epochs=1, batch=4, lr=0.1, seed=1)
    moved = 0.0
    for got, want, start in zip(
        net.get_params(), ref.get_params(), lenet.init(seed=1), strict=True
    ):
        for a, b, a0 in zip(got, want, start, strict=True):
            assert rel(a, b) < 1e-6
            moved = max(moved, rel(a, a0))
    assert moved > 1e-4  # the steps did change the weights
    np.testing.assert_allclose(net.logits(X), ref.logits(X), rtol=0, atol=1e-5)


def test_lenet_shapes_are_the_papers():
    net = lenet.network(seed=0)
    x = to_device(np.zeros((1, 32, 32, 1), np.float32))
    shapes = []
    for layer in net.layers:
        x = layer.forward(x)
        shapes.append(tuple(x.shape))
    assert shapes == [
        (1, 28, 28, 6),
        (1, 14, 14, 6),
        (1, 10, 10, 16),
        (1, 5, 5, 16),
        (1, 1, 1, 120),
        (1, 120),
        (1, 84),
        (1, 10),
    ]
    n_params = sum(
        int(np.prod(p.shape)) for layer in net.layers for p in layer.params()
    )
    # the paper's 60,000 trainable parameters, a little more with C3 fully connected
    assert n_params == 156 + 2416 + 48120 + 10164 + 850
