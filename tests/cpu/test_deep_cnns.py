"""A10 and A11's networks on the CPU backend: each family (AlexNet-style with tanh
and dropout, VGG-style, ResNets plain and residual, with and without batch norm,
both shortcuts) against its PyTorch twin over two SGD steps, at tiny sizes; the layer
shapes and parameter counts; augmentation; batch norm's calibration.

The twin runs in float32 on the CPU with the kernels' own dropout masks; both sides
sum in their own orders, so the bounds are float32 rounding grown over a few
steps (1e-4 relative on the weights, 1e-4 absolute on the logits).
"""

import numpy as np
import pytest

from thousand.models import cnn
from thousand.models import deep_cnns as D
from thousand.models.data import one_hot

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")
torch = pytest.importorskip("torch")


def rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-12))


SPECS = {
    "alexnet-relu": lambda: D.alexnet(1, width=2, image=16, hidden=8),
    "alexnet-tanh": lambda: D.alexnet(
        1, width=2, image=16, activation="tanh", hidden=8
    ),
    "vgg": lambda: D.vgg(1, width=2, image=8, hidden=8),
    "plain-bn": lambda: D.resnet(1, blocks=1, width=2, residual=False),
    "resnet-bn": lambda: D.resnet(1, blocks=1, width=2),
    "resnet-projection": lambda: D.resnet(1, blocks=1, width=2, shortcut="C"),
    "resnet-no-bn": lambda: D.resnet(1, blocks=1, width=2, batch_norm=False),
}
SIZES = {"alexnet-relu": 16, "alexnet-tanh": 16}  # the rest: 8 x 8


def check_against_twin(name, steps=2, batch=4, device="cpu", tol=1e-4):
    """`steps` SGD steps from the same weights on the same batches, then the
    weights and the evaluation logits (after calibration) of both."""
    from thousand.models import cnn_twin

    spec = SPECS[name]()
    size = SIZES.get(name, 8)
    rng = np.random.default_rng(2)
    X = rng.random((batch * steps, size, size, 1)).astype(np.float32)
    T = one_hot(np.arange(batch * steps) % 10, 10)
    ours = D.network(spec, batch)
    twin = cnn_twin.network(spec, batch, device=device, same_masks=True)
    start = D.initial_params(spec)
    for a, b, c in zip(ours.flat_params(), twin.flat_params(), start, strict=True):
        assert a.shape == b.shape == c.shape and rel(a, c) == 0 and rel(b, c) == 0
    for i in range(steps):
        rows = slice(i * batch, (i + 1) * batch)
        for net in (ours, twin):
            net.train_step(X[rows], T[rows], 0.1)
    moved = 0.0
    for got, want, s in zip(ours.flat_params(), twin.flat_params(), start, strict=True):
        assert rel(got, want) < tol, name
        moved = max(moved, rel(got, s))
    assert moved > 1e-4  # the steps did change the weights
    for net in (ours, twin):
        net.calibrate(X, batches=steps)
    np.testing.assert_allclose(ours.logits(X), twin.logits(X), rtol=0, atol=tol)


@pytest.mark.parametrize("name", list(SPECS))
def test_steps_agree_with_the_pytorch_twin(name):
    check_against_twin(name)


def test_shapes_depths_and_parameter_counts():
    spec = D.resnet(0, blocks=3)  # He et al.'s ResNet-20 at width 16
    assert D.conv_layers(spec) == 20
    # 0.27M in He et al.'s table 6 (their option A has no projections: the two
    # 1 x 1 projections of option B add 16*32 + 32*64 weights and their BN's)
    assert D.count_params(spec) == 272186
    assert D.count_params(D.resnet(0, blocks=3, residual=False)) == 269434
    net = D.network(D.resnet(0, blocks=1, width=2), batch=2)
    x = net.upload("X", np.zeros((2, 16, 16, 1), np.float32))
    shapes = []
    for layer in net.layers:
        x = layer.forward(x)
        shapes.append(tuple(x.shape))
    assert shapes[-3:] == [(2, 4, 4, 8), (2, 8), (2, 10)]
    assert cnn.count_params(net.layers) == D.count_params(D.resnet(0, 1, 2))
    # AlexNet-style: 32 -> 15 -> 7 -> 3 through the three overlapping poolings
    first_dense = next(s for kind, s in D.alexnet(0) if kind == "dense")
    assert first_dense["W"].shape == (3 * 3 * 64, 256)


def test_shift_moves_each_image_within_its_bounds():
    rng = np.random.default_rng(0)
    X = np.zeros((50, 6, 6, 1), np.float32)
    X[:, 2, 3, 0] = 1  # one lit pixel
    Y = D.shift(X, rng, 2)
    assert Y.shape == X.shape and np.all(Y.sum(axis=(1, 2, 3)) == 1)
    r, c = np.nonzero(Y[..., 0])[1:]
    assert set(r - 2) <= set(range(-2, 3)) and set(c - 3) <= set(range(-2, 3))
    assert len(set(zip(r, c, strict=True))) > 10  # shifts differ image to image
    same = D.shift(X, np.random.default_rng(0), 2)
    assert np.array_equal(Y, same)  # seeded: the same shifts again


def test_evaluation_needs_calibration_and_dropout_is_off():
    net = D.network(D.resnet(0, blocks=1, width=2), batch=4)
    X = np.random.default_rng(0).random((8, 8, 8, 1)).astype(np.float32)
    net.train_step(X[:4], one_hot(np.arange(4), 10), 0.1)
    with pytest.raises(RuntimeError, match="calibrate"):
        net.logits(X)
    net.calibrate(X)
    a = net.logits(X[:5])  # a padded last batch gives the same rows
    assert np.allclose(a, net.logits(X)[:5], atol=1e-6)
    drop = D.network(D.alexnet(0, width=2, image=16, hidden=8), batch=4)
    Xa = np.random.default_rng(1).random((4, 16, 16, 1)).astype(np.float32)
    drop.calibrate(Xa)
    assert np.array_equal(drop.logits(Xa), drop.logits(Xa))  # no mask at evaluation
