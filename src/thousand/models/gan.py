"""A13: generative adversarial networks (Goodfellow et al., 2014) on the kernels.

Two games, one trainer. RING: a 2-D generator and discriminator, both small MLPs,
on a ring of eight Gaussians (generated): the toy where mode collapse shows.
DIGITS: a DCGAN (Radford, Metz & Chintala, 2015) on scikit-learn's 8 x 8 digits,
whose generator upsamples with transposed convolutions.

A transposed convolution IS the gradient of a convolution with respect to its
input: B11's conv_backward_data, called forward. Its own backward is then the
forward convolution (conv) for the input's gradient and conv_backward_filter,
with the roles of input and output swapped, for the kernel's. No new kernel: the
three convolution kernels of B11 serve both directions.

The discriminator outputs two logits (fake, real) and is trained with softmax
cross-entropy, which over two classes is exactly the logistic loss of the paper:
D(x) = sigmoid(z_real - z_fake). Adam (Kingma & Ba) is the adamw kernel with no
weight decay, the betas DCGAN chose (0.5, 0.999).

What differs from DCGAN: no batch norm, and ReLU in the discriminator where
DCGAN used leaky ReLU (the package has no leaky ReLU kernel). At 8 x 8 with two
layers each, the nets train without either.

python -m thousand.models.gan      (a few steps of each game)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from thousand.cuda import synchronize, to_device
from thousand.kernels.adamw import adamw, hyper_parameters
from thousand.kernels.axpy import axpy
from thousand.kernels.col_sum import col_sum
from thousand.kernels.conv import conv
from thousand.kernels.conv_backward_data import conv_backward_data
from thousand.kernels.conv_backward_filter import conv_backward_filter
from thousand.kernels.conv_geometry import ConvGeometry
from thousand.kernels.copy import copy
from thousand.kernels.softmax_xent import softmax_xent
from thousand.models import cnn as dc
from thousand.models.layers import BACKWARD, FORWARD, Buffers

LOSSES = ("non-saturating", "saturating")
UP = ConvGeometry(stride=2, pad=1)  # 4 x 4 kernel: doubles H and W exactly

# The kernel families a training step launches (the experiments hash them).
FAMILIES = (
    "matmul",
    "transpose",
    "bias_add",
    "bias_relu",
    "bias_tanh",
    "relu_backward",
    "tanh_backward",
    "col_sum",
    "conv",
    "conv_backward_data",
    "conv_backward_filter",
    "softmax_xent",
    "copy",
    "axpy",
    "adamw",
)
FILES = ("models/gan.py", "models/cnn.py", "models/layers.py")


# --8<-- [start:config]
@dataclass(frozen=True)
class Config:
    """One game: the noise's size, the batch, Adam's rate and first beta."""

    game: str  # "ring" or "digits"
    z: int
    batch: int
    lr: float
    beta1: float = 0.5


RING = Config("ring", z=16, batch=256, lr=1e-3)
DIGITS = Config("digits", z=32, batch=64, lr=2e-3)
# --8<-- [end:config]
HIDDEN = 128  # the ring's MLPs: two hidden layers of 128 ReLUs each
GAMES = {"ring": RING, "digits": DIGITS}


def _check_config(where: str, cfg) -> None:
    if not isinstance(cfg, Config):
        raise TypeError(
            f"{where}: `cfg` must be a gan.Config, got {type(cfg).__name__}"
        )
    if cfg.game not in GAMES:
        raise ValueError(f"{where}: cfg.game is {cfg.game!r}; games are {list(GAMES)}")


# --8<-- [start:ring]
def _check_rng_n(where: str, rng, n) -> None:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"{where}: `rng` must be a numpy Generator, got {rng!r}")
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"{where}: `n` must be an int >= 1, got {n!r}")


def ring(
    rng: np.random.Generator,
    n: int,
    modes: int = 8,
    radius: float = 2.0,
    std: float = 0.02,
) -> np.ndarray:
    """n points from `modes` Gaussians of standard deviation `std` evenly spaced
    on a circle of `radius` (Metz et al. 2017's toy), (n, 2) float32."""
    _check_rng_n("gan.ring", rng, n)
    if not (isinstance(modes, int) and modes >= 1 and radius > 0 and std >= 0):
        raise ValueError(
            f"gan.ring: want modes an int >= 1, radius > 0, std >= 0; got modes "
            f"{modes!r}, radius {radius!r}, std {std!r}"
        )
    k = rng.integers(0, modes, n)
    angle = 2 * np.pi * k / modes
    centre = radius * np.stack([np.cos(angle), np.sin(angle)], axis=1)
    return (centre + std * rng.standard_normal((n, 2))).astype(np.float32)


def ring_centres(modes: int = 8, radius: float = 2.0) -> np.ndarray:
    angle = 2 * np.pi * np.arange(modes) / modes
    return radius * np.stack([np.cos(angle), np.sin(angle)], axis=1)


def modes_covered(samples: np.ndarray, std: float = 0.02, least: int = 20):
    """(modes with at least `least` samples within 3 std of their centre, share of
    samples within 3 std of any centre): how many of the eight the generator
    reaches, and how many of its points are good ones."""
    samples = np.asarray(samples)
    if samples.ndim != 2 or samples.shape[1] != 2 or not len(samples):
        raise ValueError(
            f"gan.modes_covered: `samples` must be (n, 2) points, n >= 1; got shape "
            f"{samples.shape}"
        )
    d = np.linalg.norm(samples[:, None, :] - ring_centres()[None], axis=2)  # (n, 8)
    near = d < 3 * std
    counts = near.sum(axis=0)
    return int((counts >= least).sum()), float(near.any(axis=1).mean())


# --8<-- [end:ring]


# --8<-- [start:init]
def init(cfg: Config, seed: int) -> dict:
    """Both nets' weights, N(0, 1 / fan_in) (LeCun), biases zero: a dict of lists
    of (weight, bias) pairs, "G" and "D", in the order data flows. Convolution
    kernels are R x S x C x F as in B11; a transposed convolution's K is that of the
    convolution it transposes: C its output channels, F its input ones."""
    _check_config("gan.init", cfg)
    rng = np.random.default_rng(seed)

    def w(shape, fan_in):
        return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)

    def pair(shape, fan_in, n_out):
        return (w(shape, fan_in), np.zeros(n_out, np.float32))

    if cfg.game == "ring":
        G = [
            pair((cfg.z, HIDDEN), cfg.z, HIDDEN),
            pair((HIDDEN, HIDDEN), HIDDEN, HIDDEN),
            pair((HIDDEN, 2), HIDDEN, 2),
        ]
        D = [
            pair((2, HIDDEN), 2, HIDDEN),
            pair((HIDDEN, HIDDEN), HIDDEN, HIDDEN),
            pair((HIDDEN, 2), HIDDEN, 2),
        ]
    else:  # a transposed conv's fan-in: the taps that reach one output, R S F / 4
        G = [
            pair((cfg.z, 2 * 2 * 64), cfg.z, 256),  # z -> 2 x 2 x 64
            pair((4, 4, 32, 64), 4 * 64, 32),  # -> 4 x 4 x 32
            pair((4, 4, 1, 32), 4 * 32, 1),
        ]  # -> 8 x 8 x 1
        D = [
            pair((4, 4, 1, 32), 16, 32),  # 8 x 8 x 1 -> 4 x 4 x 32
            pair((4, 4, 32, 64), 16 * 32, 64),  # -> 2 x 2 x 64
            pair((256, 2), 256, 2),
        ]  # -> logits (fake, real)
    return {"G": G, "D": D}


# --8<-- [end:init]


def check_params(where: str, cfg: Config, params) -> None:
    """Refuse parameters that are not init's layout and shapes for this game."""
    want = init(cfg, 0)
    ok = isinstance(params, dict) and set(params) == {"G", "D"}
    if ok:
        for net in "GD":
            got = params[net]
            ok = ok and len(got) == len(want[net])
            for pair, ref in zip(got, want[net], strict=False):
                ok = ok and len(pair) == 2
                ok = ok and all(
                    np.shape(a) == b.shape for a, b in zip(pair, ref, strict=False)
                )
    if not ok:
        shapes = {n: [tuple(a.shape for a in p) for p in want[n]] for n in "GD"}
        raise ValueError(
            f"{where}: `params` must be gan.init's layout for the {cfg.game} game, "
            f"(weight, bias) shapes {shapes}"
        )


# --8<-- [start:transposed]
class TransposedConv(dc.Layer):
    """Y = f(conv_transpose(X, K) + b): X is (N, P, Q, F), Y is (N, H, W, C) with
    (H, W) = `hw`, K is R x S x C x F. Forward is B11's input gradient of a
    convolution; backward is that convolution forward (for dX) and its filter
    gradient with input and output swapped (for dK)."""

    def __init__(self, K, b, hw, geom=UP, activation="relu"):
        if activation not in FORWARD:
            raise ValueError(f"activation must be one of {sorted(FORWARD)}")
        self.K = to_device(np.ascontiguousarray(K, np.float32))
        self.b = to_device(np.asarray(b, np.float32))
        self.hw, self.geom, self.activation = tuple(hw), geom, activation
        self.buf = Buffers()

    def forward(self, X):
        N, (H, W), C = X.shape[0], self.hw, self.K.shape[2]
        Y = self.buf("Y", (N, H, W, C))
        conv_backward_data(X, self.K, self.hw, self.geom, out=Y)  # the upsampling
        FORWARD[self.activation](Y, self.b, out=Y)  # bias and f, in place
        self.X, self.Y = X, Y
        return Y

    def backward(self, G, need_dX: bool = True):
        dZ = G
        if self.activation != "linear":
            dZ = BACKWARD[self.activation](G, self.Y, out=self.buf("dZ", G.shape))
        R, S, C, _ = self.K.shape
        dK = self.buf("dK", self.K.shape)
        conv_backward_filter(dZ, self.X, (R, S), self.geom, out=dK)  # roles swapped
        db = col_sum(dZ.reshape(-1, C), out=self.buf("db", (C,)))
        self.grads = [dK, db]
        if not need_dX:
            return None
        dX = self.buf("dX", self.X.shape)
        return conv(dZ, self.K, self.geom, out=dX)  # a transposed conv's transpose

    def params(self):
        return [self.K, self.b]


# --8<-- [end:transposed]


class Reshape(dc.Layer):
    """(N, everything) to (N, *shape): a view of the same memory."""

    def __init__(self, shape: tuple):
        self.shape = tuple(shape)

    def forward(self, X):
        self.X_shape = tuple(X.shape)
        return X.reshape(X.shape[0], *self.shape)

    def backward(self, G, need_dX: bool = True):
        return G.reshape(self.X_shape)


# --8<-- [start:nets]
def nets(cfg: Config, params: dict) -> tuple[list, list]:
    """The generator's and the discriminator's layers, loaded with `params`."""
    _check_config("gan.nets", cfg)
    G, D = params["G"], params["D"]
    if cfg.game == "ring":
        g = [dc.Dense(*G[0], "relu"), dc.Dense(*G[1], "relu"), dc.Dense(*G[2])]
        d = [dc.Dense(*D[0], "relu"), dc.Dense(*D[1], "relu"), dc.Dense(*D[2])]
        return g, d
    g = [
        dc.Dense(*G[0], "relu"),  # (N, z) -> (N, 256)
        Reshape((2, 2, 64)),  # -> (N, 2, 2, 64)
        TransposedConv(*G[1], (4, 4), UP, "relu"),  # -> (N, 4, 4, 32)
        TransposedConv(*G[2], (8, 8), UP, "tanh"),  # -> (N, 8, 8, 1), in [-1, 1]
    ]
    d = [
        dc.Conv(*D[0], UP, "relu"),  # (N, 8, 8, 1) -> (N, 4, 4, 32)
        dc.Conv(*D[1], UP, "relu"),  # -> (N, 2, 2, 64)
        dc.Flatten(),  # -> (N, 256)
        dc.Dense(*D[2]),  # -> (N, 2): logits of fake and real
    ]
    return g, d


# --8<-- [end:nets]


def _shared(layers: list) -> list:
    """The same layers again, sharing their parameters' memory but with buffers of
    their own: the discriminator runs on 2B rows in its step and B rows in the
    generator's, and a layer's buffers are made again whenever the shape changes."""
    import copy as _copy

    twins = []
    for layer in layers:
        t = _copy.copy(layer)  # parameters are the same device arrays
        if isinstance(t, dc.Dense):
            t.inner = _copy.copy(layer.inner)
            t.inner.buf = Buffers()
        if hasattr(t, "buf"):
            t.buf = Buffers()
        twins.append(t)
    return twins


class Adam:
    """Adam over a list of layers: the adamw kernel with no weight decay, one launch
    per parameter, moments on the device."""

    def __init__(self, layers: list, lr: float, beta1: float):
        self.layers, self.lr, self.beta1, self.t = layers, lr, beta1, 0
        self.params = [p for layer in layers for p in layer.params()]
        self.m = [to_device(np.zeros(p.size, np.float32)) for p in self.params]
        self.v = [to_device(np.zeros(p.size, np.float32)) for p in self.params]
        self.hyper = to_device(np.zeros(6, np.float32))

    def step(self):
        self.t += 1
        self.hyper.set(hyper_parameters(self.lr, self.beta1, 0.999, 1e-8, 0.0, self.t))
        grads = [g for layer in self.layers for g in layer.grads]
        for p, g, m, v in zip(self.params, grads, self.m, self.v, strict=True):
            flat, n = p.reshape(p.size), p.size
            adamw(flat, g.reshape(n), m, v, self.hyper, out=(flat, m, v))


def _forward(layers, X):
    for layer in layers:
        X = layer.forward(X)
    return X


def _backward(layers, G, need_dX: bool):
    for i, layer in reversed(list(enumerate(layers))):
        G = layer.backward(G, need_dX=need_dX or i > 0)
    return G


# --8<-- [start:trainer]
class GAN:
    """The two players and one step of the game each. The discriminator's step:
    B real and B generated samples in one batch of 2B rows, labelled real and fake,
    softmax cross-entropy (the mean of the two halves' logistic losses). The
    generator's step: B new samples through the discriminator, labelled real
    (non-saturating: minimise -log D(G(z))) or the gradient of labelling them fake
    turned around (saturating: minimise log(1 - D(G(z))), the paper's minimax)."""

    def __init__(self, cfg: Config, params: dict, loss: str = "non-saturating"):
        _check_config("gan.GAN", cfg)
        if loss not in LOSSES:
            raise ValueError(f"gan.GAN: `loss` is {loss!r}; losses are {LOSSES}")
        check_params("gan.GAN", cfg, params)
        self.cfg, self.loss_kind = cfg, loss
        self.G, self.D = nets(cfg, params)
        self.D_g = _shared(self.D)  # the discriminator as the generator's step sees it
        self.opt_G = Adam(self.G, cfg.lr, cfg.beta1)
        self.opt_D = Adam(self.D, cfg.lr, cfg.beta1)
        B = cfg.batch
        labels = np.zeros((2 * B, 2), np.float32)
        labels[:B, 1] = labels[B:, 0] = 1.0  # real rows, then fake rows
        self.T_d = to_device(labels)
        self.T_real = to_device(labels[:B])
        self.T_fake = to_device(labels[B:])
        self.zero = to_device(np.zeros(2 * B, np.float32))
        self.buf = Buffers()

    def _put(self, name, a, shape):
        a = np.asarray(a)
        if a.size != int(np.prod(shape)) or len(a) != shape[0]:
            what = {"real": "real samples", "z_d": "noise", "z_g": "noise"}
            raise ValueError(
                f"gan.GAN: the {what.get(name, 'noise')} must be {shape[0]} rows of "
                f"{int(np.prod(shape[1:]))} values; got shape {a.shape}"
            )
        d = self.buf(name, shape)
        d.set(np.ascontiguousarray(a, np.float32).reshape(shape))
        return d

    def d_step(self, real: np.ndarray, z: np.ndarray):
        """One Adam step of D on B real samples and G(z); returns its mean loss
        (a device array of 2B per-row losses: read it only to log it)."""
        B = self.cfg.batch
        fake = _forward(self.G, self._put("z_d", z, (B, self.cfg.z)))
        shape = tuple(fake.shape)
        n = int(np.prod(shape))
        X = self.buf("X_d", (2 * B, *shape[1:]))
        flat = X.reshape(2 * n)
        copy(self._put("real", real, shape).reshape(n), out=flat[:n])
        copy(fake.reshape(n), out=flat[n:])
        Z = _forward(self.D, X)
        loss = self.buf("loss_d", (2 * B,))
        dZ = softmax_xent(Z, self.T_d, out=self.buf("dZ_d", Z.shape), loss=loss)
        _backward(self.D, dZ, need_dX=False)
        self.opt_D.step()
        return loss

    def g_step(self, z: np.ndarray):
        """One Adam step of G on B noise vectors; returns D's per-row loss on them
        (against the label the loss uses)."""
        B = self.cfg.batch
        fake = _forward(self.G, self._put("z_g", z, (B, self.cfg.z)))
        Z = _forward(self.D_g, fake)
        loss = self.buf("loss_g", (B,))
        dZ = self.buf("dZ_g", Z.shape)
        if self.loss_kind == "non-saturating":
            softmax_xent(Z, self.T_real, out=dZ, loss=loss)
        else:  # descend log(1 - D): the fake label's gradient, negated
            softmax_xent(Z, self.T_fake, out=dZ, loss=loss)
            flat = dZ.reshape(2 * B)
            axpy(-1.0, flat, self.zero, out=flat)
        dX = _backward(self.D_g, dZ, need_dX=True)  # D's grads here are unused
        _backward(self.G, dX, need_dX=False)
        self.opt_G.step()
        return loss

    def sample(self, z: np.ndarray) -> np.ndarray:
        """G(z) on the host, for any number of noise rows (in batches of B)."""
        z = np.asarray(z, np.float32)
        if z.ndim != 2 or z.shape[1] != self.cfg.z or not len(z):
            raise ValueError(
                f"gan.GAN.sample: `z` must be (n, {self.cfg.z}) noise, n >= 1; "
                f"got shape {z.shape}"
            )
        B, out = self.cfg.batch, []
        for i in range(0, len(z), B):
            chunk = z[i : i + B]
            pad = B - len(chunk)
            if pad:
                chunk = np.concatenate([chunk, np.zeros((pad, self.cfg.z), np.float32)])
            Y = _forward(self.G, self._put("z_s", chunk, (B, self.cfg.z))).get()
            out.append(Y[: B - pad])
        return np.concatenate(out)

    def params(self) -> dict:
        """Both nets' parameters on the host, in init's layout."""

        def pairs(layers):
            ps = [p.get() for layer in layers for p in layer.params()]
            return list(zip(ps[::2], ps[1::2], strict=True))

        return {"G": pairs(self.G), "D": pairs(self.D)}

    def sync(self):
        synchronize()


# --8<-- [end:trainer]


def noise(rng: np.random.Generator, n: int, z: int) -> np.ndarray:
    """Standard normal noise, (n, z) float32."""
    _check_rng_n("gan.noise", rng, n)
    if isinstance(z, bool) or not isinstance(z, int | np.integer) or z < 1:
        raise ValueError(f"gan.noise: `z` must be an int >= 1, got {z!r}")
    return rng.standard_normal((n, z)).astype(np.float32)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for cfg in (RING, DIGITS):
        model = GAN(cfg, init(cfg, 0))
        for step in range(1, 4):
            if cfg.game == "ring":
                real = ring(rng, cfg.batch)
            else:
                from thousand.models.data import digits

                X = digits()[0] * 2 - 1  # pixels in [-1, 1], as tanh gives them
                real = X[rng.integers(0, len(X), cfg.batch)]
            d = model.d_step(real, noise(rng, cfg.batch, cfg.z)).get().mean()
            g = model.g_step(noise(rng, cfg.batch, cfg.z)).get().mean()
            print(f"{cfg.game}, step {step}: D loss {d:.4f}, G loss {g:.4f}")
