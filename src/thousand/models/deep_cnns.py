"""A10 and A11's networks, scaled down to the digits: a small AlexNet-style
network (Krizhevsky et al. 2012), a small VGG-style one (Simonyan & Zisserman
2014), and CIFAR-style ResNets, plain or residual (He et al. 2015, sec. 4.2).

A network is first a *spec*: a list of layers with their initial weights, drawn
from a seed. `network(spec, batch)` builds it on the kernels (cnn.py);
cnn_twin.network(spec) builds the same one in PyTorch. Both train on the same
batches with `fit`.

The data are scikit-learn's 8 x 8 digits scaled up (data.as_images): 32 x 32 for
the AlexNet- and VGG-style nets (whose three poolings need room), 16 x 16 for the
ResNets (three stages, 16 -> 8 -> 4, as CIFAR's 32 -> 16 -> 8). Augmentation
shifts each training image by up to `shift` pixels either way (a random crop of
the image padded with zeros, as both papers crop); no flips: a mirrored 2 or 7 is
not the same digit.

What differs from the papers, beyond size: plain SGD (no momentum, no weight
decay), AlexNet's local response normalisation left out (VGG found it useless),
and batch norm's evaluation statistics measured after training (cnn.py).
"""

from __future__ import annotations

import time

import numpy as np

from thousand.kernels.conv_geometry import ConvGeometry
from thousand.models import cnn
from thousand.models.data import as_images, digits, one_hot

# --8<-- [start:specs]
# A spec is a list of (kind, settings); weights are NumPy arrays in the kernels'
# layouts: a convolution's K is R x S x C x F, a dense layer's W is n_in x n_out.


def _conv(rng, R, C, F, *, stride=1, pad=None, activation="relu", bias=True, gain=2.0):
    """A convolution with He et al.'s initialisation N(0, gain / fan_in) (gain 2
    for ReLU, 1 for tanh: LeCun's), bias zero; 'same' padding unless told."""
    K = rng.standard_normal((R, R, C, F)) * np.sqrt(gain / (R * R * C))
    return (
        "conv",
        {
            "K": K.astype(np.float32),
            "b": np.zeros(F, np.float32) if bias else None,
            "stride": stride,
            "pad": (R - 1) // 2 if pad is None else pad,
            "activation": activation if bias else "linear",
        },
    )


def _dense(rng, n_in, n_out, activation, gain=2.0):
    W = rng.standard_normal((n_in, n_out)) * np.sqrt(gain / n_in)
    return (
        "dense",
        {
            "W": W.astype(np.float32),
            "b": np.zeros(n_out, np.float32),
            "activation": activation,
        },
    )


def _classifier(rng, n_in, hidden, classes, activation, dropout, seed, gain):
    """AlexNet's and VGG's head: two hidden dense layers, dropout before each of
    the last two (Krizhevsky et al.: 'in the first two fully-connected layers')."""
    spec = [("flatten", {})]
    for i, (a, b) in enumerate(((n_in, hidden), (hidden, hidden))):
        spec.append(_dense(rng, a, b, activation, gain))
        if dropout:
            spec.append(("dropout", {"p": dropout, "seed": seed * 100 + i}))
    return [*spec, _dense(rng, hidden, classes, "linear", 1.0)]


def alexnet(seed, width=32, image=32, activation="relu", dropout=0.5, hidden=256):
    """Five convolutions, the first two large (5 x 5 here, 11 and 5 in the paper),
    overlapping 3 x 3 max pooling with stride 2, two dense layers of `hidden`."""
    rng = np.random.default_rng(seed)
    gain = 2.0 if activation == "relu" else 1.0
    c1, c2, c3 = width, 2 * width, 3 * width

    def conv(R, C, F):
        return _conv(rng, R, C, F, activation=activation, gain=gain)

    pool = ("maxpool", {"window": 3, "stride": 2})
    side = image
    for _ in range(3):
        side = (side - 3) // 2 + 1
    spec = [
        conv(5, 1, c1),
        pool,
        conv(5, c1, c2),
        pool,
        conv(3, c2, c3),
        conv(3, c3, c3),
        conv(3, c3, c2),
        pool,
    ]
    head = _classifier(
        rng, side * side * c2, hidden, 10, activation, dropout, seed, gain
    )
    return spec + head


def vgg(seed, width=32, image=32, dropout=0.5, hidden=256):
    """Three stages of two 3 x 3 convolutions (padding 1), each stage ending in
    2 x 2 max pooling and doubling the channels, then the same head as alexnet."""
    rng = np.random.default_rng(seed)
    spec, C = [], 1
    for stage in range(3):
        F = width * 2**stage
        spec += [_conv(rng, 3, C, F), _conv(rng, 3, F, F)]
        spec.append(("maxpool", {"window": 2, "stride": 2}))
        C = F
    side = image // 8
    return spec + _classifier(
        rng, side * side * C, hidden, 10, "relu", dropout, seed, 2.0
    )


# --8<-- [start:resnet]
def resnet(seed, blocks=3, width=16, residual=True, batch_norm=True, shortcut="B"):
    """He et al.'s CIFAR network, depth 6 * blocks + 2: a 3 x 3 convolution, three
    stages of `blocks` blocks of two 3 x 3 convolutions (width, 2 width, 4 width
    channels; the first block of stages 2 and 3 strides 2), global average pooling,
    one dense layer. residual=False is the plain network: the same layers, no
    shortcuts. Shortcut 'B' is the identity except where the shape changes (a
    1 x 1 convolution with stride 2 there, the paper's option B), 'C' a projection
    in every block. Without batch norm each convolution has a bias instead."""
    if shortcut not in ("B", "C"):
        raise ValueError("shortcut is 'B' (identity where it can) or 'C' (projection)")
    rng = np.random.default_rng(seed)

    def conv_bn(R, C, F, stride, relu):
        pad = (R - 1) // 2
        if not batch_norm:  # the bias and activation in the convolution
            act = "relu" if relu else "linear"
            return [_conv(rng, R, C, F, stride=stride, pad=pad, activation=act)]
        conv = _conv(rng, R, C, F, stride=stride, pad=pad, bias=False)
        return [
            conv,
            ("bn", {"channels": F, "activation": "relu" if relu else "linear"}),
        ]

    spec = conv_bn(3, 1, width, 1, relu=True)
    C = width
    for stage in range(3):
        F = width * 2**stage
        for b in range(blocks):
            stride = 2 if stage > 0 and b == 0 else 1
            body = conv_bn(3, C, F, stride, relu=True)
            body += conv_bn(3, F, F, 1, relu=not residual)
            if not residual:
                spec += body
            else:
                project = shortcut == "C" or stride != 1 or C != F
                short = conv_bn(1, C, F, stride, relu=False) if project else []
                spec.append(("residual", {"body": body, "shortcut": short}))
            C = F
    spec += [("gap", {}), _dense(rng, C, 10, "linear", 1.0)]
    return spec


# --8<-- [end:resnet]
# --8<-- [end:specs]


def conv_layers(spec) -> int:
    """Weighted layers (convolutions and dense, projections not counted), as the
    papers count depth."""
    n = 0
    for kind, s in spec:
        if kind == "residual":
            n += conv_layers(s["body"])
        elif kind in ("conv", "dense"):
            n += 1
    return n


def count_params(spec) -> int:
    n = 0
    for kind, s in spec:
        if kind == "conv":
            n += s["K"].size + (0 if s["b"] is None else s["b"].size)
        elif kind == "dense":
            n += s["W"].size + s["b"].size
        elif kind == "bn":
            n += 2 * s["channels"]
        elif kind == "residual":
            n += count_params(s["body"]) + count_params(s["shortcut"])
    return n


# --8<-- [start:build]
def layer_list(spec, version=3) -> list:
    """The spec's layers on the kernels (cnn.py); `version` of the forward conv."""
    built = []
    for kind, s in spec:
        if kind == "conv":
            geom = ConvGeometry(stride=s["stride"], pad=s["pad"])
            built.append(cnn.Conv(s["K"], s["b"], geom, s["activation"], version))
        elif kind == "bn":
            built.append(cnn.BatchNorm(s["channels"], s["activation"]))
        elif kind == "maxpool":
            built.append(cnn.MaxPool(s["window"], s["stride"]))
        elif kind == "dropout":
            built.append(cnn.Dropout(s["p"], s["seed"]))
        elif kind == "gap":
            built.append(cnn.GlobalAvgPool())
        elif kind == "flatten":
            built.append(cnn.Flatten())
        elif kind == "dense":
            built.append(cnn.Dense(s["W"], s["b"], s["activation"]))
        elif kind == "residual":
            body = layer_list(s["body"], version)
            built.append(cnn.Residual(body, layer_list(s["shortcut"], version)))
        else:
            raise ValueError(f"unknown layer kind {kind!r}")
    return built


def network(spec, batch: int, version: int = 3) -> cnn.CNN:
    return cnn.CNN(layer_list(spec, version), batch)


# --8<-- [end:build]


def initial_params(spec) -> list[np.ndarray]:
    """The spec's parameters in the order the networks list theirs (flat_params):
    batch norm's gamma (ones) and beta (zeros) included."""
    out = []
    for kind, s in spec:
        if kind == "conv":
            out += [s["K"]] + ([] if s["b"] is None else [s["b"]])
        elif kind == "dense":
            out += [s["W"], s["b"]]
        elif kind == "bn":
            C = s["channels"]
            out += [np.ones(C, np.float32), np.zeros(C, np.float32)]
        elif kind == "residual":
            out += initial_params(s["body"]) + initial_params(s["shortcut"])
    return out


# --8<-- [start:data]
def digit_images(size: int = 32):
    """The digits split of data.digits as size x size NHWC images: 32 (each pixel
    3 x 3, a 4-pixel border, LeNet's field) or 16 (each pixel 2 x 2) or 8."""
    X_train, X_test, y_train, y_test = digits()
    scale, pad = {32: (3, 4), 16: (2, 0), 8: (1, 0)}[size]
    return (
        as_images(X_train, scale, pad),
        as_images(X_test, scale, pad),
        y_train,
        y_test,
    )


def shift(X: np.ndarray, rng: np.random.Generator, pixels: int) -> np.ndarray:
    """Each image moved by its own random (dy, dx) in [-pixels, pixels]: the crop
    of the zero-padded image at that offset."""
    N, H, W, C = X.shape
    p = pixels
    padded = np.pad(X, ((0, 0), (p, p), (p, p), (0, 0)))
    dy, dx = rng.integers(0, 2 * p + 1, (2, N))
    rows = dy[:, None] + np.arange(H)  # (N, H)
    cols = dx[:, None] + np.arange(W)  # (N, W)
    n = np.arange(N)[:, None, None]
    return np.ascontiguousarray(padded[n, rows[:, :, None], cols[:, None, :]])


# --8<-- [end:data]


def accuracy(net, X, labels) -> float:
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
    augment=0,
    evaluate=None,
    every=None,
    calibration_batches=8,
):
    """Minibatch SGD on softmax cross-entropy, lr * decay^(e - 1) in epoch e, full
    batches only (a batch norm's statistics need a batch). The order, and the shifts
    when `augment` > 0, come from `seed`: the same batches for any network. After
    each epoch (or each `every` steps) batch norm is calibrated and
    `evaluate(epoch or step)` called, when given. Returns the seconds of each
    epoch's training steps (the device synchronised before the clock stops;
    calibration and evaluation not counted)."""
    rng = np.random.default_rng(seed)
    T = one_hot(labels, 10)
    seconds, step = [], 0

    def check(at):
        net.calibrate(X, calibration_batches)
        evaluate(at)

    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(X))
        rate = lr * decay ** (epoch - 1)
        start, paused = time.perf_counter(), 0.0
        for i in range(0, len(X) - batch + 1, batch):
            rows = order[i : i + batch]
            images = shift(X[rows], rng, augment) if augment else X[rows]
            net.train_step(images, T[rows], rate)
            step += 1
            if evaluate is not None and every and step % every == 0:
                net.sync()
                t = time.perf_counter()
                check(step)
                paused += time.perf_counter() - t
        net.sync()
        seconds.append(time.perf_counter() - start - paused)
        if evaluate is not None and not every:
            check(epoch)
    return seconds


# --8<-- [end:fit]


def curves(net, X_train, y_train, X_test, y_test, epochs, **settings):
    """fit, recording after each epoch (or `every` steps) the training loss and
    accuracy (on the unshifted training images, in evaluation mode) and the
    held-out accuracy."""
    T_train = one_hot(y_train, 10)
    out = {"at": [], "train_loss": [], "train_acc": [], "test_acc": []}

    def evaluate(at):
        loss = net.mean_loss(X_train, T_train)
        out["at"].append(at)
        out["train_loss"].append(loss if np.isfinite(loss) else None)
        out["train_acc"].append(accuracy(net, X_train, y_train))
        out["test_acc"].append(accuracy(net, X_test, y_test))

    out["seconds"] = fit(
        net, X_train, y_train, epochs=epochs, evaluate=evaluate, **settings
    )
    return out


def steady(seconds) -> float:
    """Seconds per epoch without the first (it compiles and allocates)."""
    return float(np.median(seconds[1:] if len(seconds) > 1 else seconds))


def twin_epoch_seconds(spec, X, y, *, epochs, batch, **settings):
    """The PyTorch twin's seconds per epoch on the same batches (steady: the
    first epoch left out), on the GPU when PyTorch has CUDA, TF32 off; torch's
    own dropout masks. Returns (seconds, device)."""
    import torch

    from thousand.models import cnn_twin

    torch.backends.cuda.matmul.allow_tf32 = False  # float32 against float32
    torch.backends.cudnn.allow_tf32 = False
    device = "cuda" if torch.cuda.is_available() else "cpu"
    twin = cnn_twin.network(spec, batch, device)
    return steady(fit(twin, X, y, epochs=epochs, batch=batch, **settings)), device


def epochs_to(accuracies, threshold) -> int:
    """The first epoch whose accuracy reaches `threshold`; -1 when none does."""
    for e, a in enumerate(accuracies, start=1):
        if a >= threshold:
            return e
    return -1
