"""A9: a variational autoencoder (Kingma & Welling 2013) on the binarised digits,
every operation one of the package's kernels.

The encoder maps a picture x (64 pixels, 0 or 1) to a Gaussian q(z | x) =
N(mu, diag(exp(logvar))) over L latent numbers; reparam_kl draws z = mu + sigma *
eps (eps from Philox on the GPU) and each element's share of KL(q || N(0, I)); the
decoder maps z to 64 Bernoulli logits. The loss of a batch is the mean over its
pictures of

    reconstruction + beta * KL,   reconstruction = -log p(x | z) (binary cross-entropy)

which is the negative ELBO when beta = 1. Adam (adamw with no decay) trains it.
`twin` (vae_twin.py) is the same model in PyTorch, fed the same eps.

python -m thousand.models.vae      (a short run, both terms after each epoch)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from thousand.cuda import synchronize, to_device
from thousand.kernels.adamw import adamw, hyper_parameters
from thousand.kernels.axpy import axpy
from thousand.kernels.copy import copy
from thousand.kernels.matrix_add import matrix_add
from thousand.kernels.reparam_kl import normal_ref, reparam_kl
from thousand.kernels.reparam_kl_backward import reparam_kl_backward
from thousand.kernels.sigmoid import sigmoid
from thousand.models.layers import Buffers, Dense

# What the GPU run's experiments use; quick mode trims epochs, not the model.
SETTINGS = {"hidden": 128, "latent": 8, "epochs": 60, "batch": 64, "lr": 2e-3}
LOG_2PI = math.log(2 * math.pi)


@dataclass(frozen=True)
class Config:
    n_in: int = 64  # 8 x 8 pixels
    hidden: int = 128
    latent: int = 8
    beta: float = 1.0  # the KL term's weight: 1 is the ELBO, > 1 is beta-VAE

    def __post_init__(self):
        for name in ("n_in", "hidden", "latent"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"Config: `{name}` must be an int >= 1, got {v!r}")
        b = self.beta
        if isinstance(b, bool) or not isinstance(b, int | float) or not b >= 0:
            raise ValueError(f"Config: `beta` must be a number >= 0, got {b!r}")


# --8<-- [start:init]
LAYERS = ("enc", "mu", "logvar", "dec", "out")  # in the order data flows


def init(cfg: Config, seed: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """W ~ N(0, 2 / fan_in) before a ReLU, N(0, 1 / fan_in) before a linear output;
    biases 0, except logvar's: -2 starts every sigma at exp(-1), a narrow posterior
    whose noise does not drown the first steps."""
    rng = np.random.default_rng(seed)
    shapes = {
        "enc": (cfg.n_in, cfg.hidden, 2.0),
        "mu": (cfg.hidden, cfg.latent, 1.0),
        "logvar": (cfg.hidden, cfg.latent, 1.0),
        "dec": (cfg.latent, cfg.hidden, 2.0),
        "out": (cfg.hidden, cfg.n_in, 1.0),
    }
    p = {}
    for name in LAYERS:
        n_in, n_out, gain = shapes[name]
        W = rng.standard_normal((n_in, n_out)) * math.sqrt(gain / n_in)
        b = np.full(n_out, -2.0 if name == "logvar" else 0.0)
        p[name] = (W.astype(np.float32), b.astype(np.float32))
    return p


# --8<-- [end:init]


class VAE:
    """The model on the device. `step(X)` trains on a batch; `forward(X)` returns
    what the loss needs; `encode` and `decode` serve the pictures."""

    def __init__(self, cfg: Config, params: dict, seed: int = 0, lr: float = 2e-3):
        if not isinstance(cfg, Config):
            raise TypeError(f"VAE: `cfg` must be a Config, got {type(cfg).__name__}")
        if set(params) != set(LAYERS):
            raise ValueError(f"VAE: `params` needs {LAYERS}, got {sorted(params)}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"VAE: `seed` must be an int >= 0, got {seed!r}")
        if not isinstance(lr, int | float) or not lr > 0:
            raise ValueError(f"VAE: `lr` must be a number > 0, got {lr!r}")
        self.cfg, self.seed, self.lr = cfg, seed, float(lr)
        act = {"enc": "relu", "mu": "linear", "logvar": "linear", "dec": "relu"}
        self.layers = {n: Dense(*params[n], act.get(n, "linear")) for n in LAYERS}
        self.drawn = 0  # Philox counters used so far: each step takes fresh eps
        self.buf = Buffers()
        self.m = [to_device(np.zeros(p.size, np.float32)) for p in self.params()]
        self.v = [to_device(np.zeros(p.size, np.float32)) for p in self.params()]
        self.t = 0
        self.hyper = to_device(hyper_parameters(lr, weight_decay=0.0))

    def params(self) -> list:
        return [p for n in LAYERS for p in self.layers[n].params()]

    def upload(self, name: str, a: np.ndarray):
        d = self.buf(name, a.shape)
        d.set(np.ascontiguousarray(a, dtype=np.float32))
        return d

    # --8<-- [start:forward]
    def forward(self, X, offset: int):
        """X (B, 64) on the device; eps from counters offset .. offset + B * L - 1.
        Returns the decoder's logits (B, 64), Y = sigmoid(logits), and the latent
        layer's output (2, B, L): z, then each element's KL."""
        B, L = X.shape[0], self.cfg.latent
        H = self.layers["enc"].forward(X)  # (B, hidden), ReLU
        mu = self.layers["mu"].forward(H)  # (B, L)
        logvar = self.layers["logvar"].forward(H)  # (B, L)
        zk = reparam_kl(mu, logvar, self.seed, offset, out=self.buf("zk", (2, B, L)))
        D = self.layers["dec"].forward(zk[0])  # (B, hidden), ReLU
        logits = self.layers["out"].forward(D)  # (B, 64)
        Y = self.buf("Y", logits.shape)
        sigmoid(logits.reshape(logits.size), out=Y.reshape(Y.size))  # 1-D kernel
        self.mu, self.logvar = mu, logvar  # what backward needs
        return logits, Y, zk

    # --8<-- [end:forward]

    # --8<-- [start:backward]
    def backward(self, X, Y, offset: int):
        """Gradients of the batch's mean loss, reconstruction + beta * KL. For
        binary cross-entropy on sigmoid outputs dL/dlogits = (Y - X) / B, one axpy
        given -X / B (uploaded with the batch as `Xneg`)."""
        B, L = X.shape[0], self.cfg.latent
        Xneg = self.buf("Xneg", X.shape)
        flat = (B * self.cfg.n_in,)
        G = self.buf("G", X.shape)
        axpy(1.0 / B, Y.reshape(flat), Xneg.reshape(flat), out=G.reshape(flat))
        D = self.layers["out"].backward(G)  # dL/dD
        dz = self.layers["dec"].backward(D)  # dL/dz (B, L)
        w = self.cfg.beta / B  # the KL term's weight in the batch mean
        g = self.buf("g", (2, B, L))
        reparam_kl_backward(dz, self.mu, self.logvar, w, self.seed, offset, out=g)
        dH = self.layers["mu"].backward(g[0])  # dL/dH through mu ...
        dlv = g[1]  # starts B L floats in: matmul's vector loads want 16 bytes
        if (B * L) % 4:
            dlv = copy(dlv.reshape(B * L), out=self.buf("dlv", (B * L,)), version=1)
            dlv = dlv.reshape(B, L)
        dH2 = self.layers["logvar"].backward(dlv)  # ... and through logvar
        dH = matrix_add(dH, dH2, out=self.buf("dH", dH.shape))
        self.layers["enc"].backward(dH, need_dX=False)

    def adam(self):
        """One adamw launch per parameter (weight decay 0: Adam)."""
        self.t += 1
        self.hyper.set(hyper_parameters(self.lr, weight_decay=0.0, t=self.t))
        grads = [g for n in LAYERS for g in self.layers[n].grads]
        for p, g, m, v in zip(self.params(), grads, self.m, self.v, strict=True):
            flat = p.reshape(p.size)
            adamw(flat, g.reshape(p.size), m, v, self.hyper, out=(flat, m, v))

    def step(self, X: np.ndarray):
        """One training step on a host batch X (B, 64)."""
        B = X.shape[0]
        d_X = self.upload("X", X)
        self.upload("Xneg", -X / np.float32(B))
        offset = self.drawn
        self.drawn += B * self.cfg.latent
        _, Y, _ = self.forward(d_X, offset)
        self.backward(d_X, Y, offset)
        self.adam()

    # --8<-- [end:backward]

    def host_params(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        return {n: tuple(p.get() for p in self.layers[n].params()) for n in LAYERS}

    def encode(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """mu and logvar (B, L) of q(z | x) for host pictures X."""
        H = self.layers["enc"].forward(self.upload("X_eval", X))
        return self.layers["mu"].forward(H).get(), self.layers["logvar"].forward(
            H
        ).get()

    def decode(self, Z: np.ndarray, logits: bool = False) -> np.ndarray:
        """Pixel probabilities (B, 64) for host latent points Z (B, L), or the
        logits they come from."""
        D = self.layers["dec"].forward(self.upload("Z_eval", Z))
        out = self.layers["out"].forward(D)
        if logits:
            return out.get()
        return sigmoid(out.reshape(out.size)).get().reshape(out.shape)

    def evaluate(self, X: np.ndarray, offset: int = 2**40):
        """Per picture, from one draw of eps (counters far from training's): the
        reconstruction term -log p(x | z), the KL term, and z, mu, logvar (float64
        on the host)."""
        logits, _, zk = self.forward(self.upload("X_eval", X), offset)
        logits = logits.get().astype(np.float64)
        zk = zk.get().astype(np.float64)
        rec = bernoulli_nll(X, logits)
        mu, lv = self.mu.get().astype(np.float64), self.logvar.get().astype(np.float64)
        return rec, zk[1].sum(axis=1), zk[0], mu, lv


# --8<-- [start:nll]
def bernoulli_nll(X: np.ndarray, logits: np.ndarray) -> np.ndarray:
    """-log p(x | z) per row, from the logits: sum of softplus(l) - x l (stable)."""
    return (np.logaddexp(0, logits) - X * logits).sum(axis=1)


# --8<-- [end:nll]


# --8<-- [start:train]
def train(model: VAE, X, *, epochs: int, batch: int, seed: int, X_test=None, log=None):
    """Minibatches in an order drawn from `seed`. After each epoch, when given,
    log(epoch, reconstruction, KL) with both terms' means over X_test. Returns
    the seconds spent in training steps (the device synchronised)."""
    import time

    for name, v in (("epochs", epochs), ("batch", batch), ("seed", seed)):
        if isinstance(v, bool) or not isinstance(v, int) or v < (name != "seed"):
            raise ValueError(f"train: `{name}` must be an int >= 1, got {v!r}")
    rng = np.random.default_rng(seed)
    seconds = 0.0
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(X))
        start = time.perf_counter()
        for i in range(0, len(X), batch):
            model.step(X[order[i : i + batch]])
        synchronize()
        seconds += time.perf_counter() - start
        if log is not None and X_test is not None:
            rec, kl, *_ = model.evaluate(X_test)
            log(epoch, float(rec.mean()), float(kl.mean()))
    return seconds


# --8<-- [end:train]


# --8<-- [start:iwae]
def log_likelihood(model: VAE, X: np.ndarray, k: int, chunk: int = 32):
    """The importance-weighted estimate of log p(x) per picture (Burda, Grosse and
    Salakhutdinov 2015): with z_1 .. z_k drawn from q(z | x),

        log p(x) >= log (1/k) sum_i p(x | z_i) p(z_i) / q(z_i | x)

    a bound that tightens to log p(x) as k grows (k = 1 is the ELBO). The k draws
    of every picture go through the kernels as one batch of repeated rows."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"log_likelihood: `k` must be an int >= 1, got {k!r}")
    out = []
    for i in range(0, len(X), chunk):
        Xc = np.repeat(X[i : i + chunk], k, axis=0)  # (n k, 64)
        logits, _, zk = model.forward(
            model.upload("X_iw", Xc), 2**41 + i * k * model.cfg.latent
        )
        z = zk[0].get().astype(np.float64)
        mu, lv = (
            model.mu.get().astype(np.float64),
            model.logvar.get().astype(np.float64),
        )
        log_px_z = -bernoulli_nll(Xc, logits.get().astype(np.float64))
        log_pz = -0.5 * (LOG_2PI + z * z).sum(axis=1)
        log_qz = -0.5 * (LOG_2PI + lv + (z - mu) ** 2 / np.exp(lv)).sum(axis=1)
        w = (log_px_z + log_pz - log_qz).reshape(-1, k)  # (n, k) log-weights
        top = w.max(axis=1, keepdims=True)
        out.append(top[:, 0] + np.log(np.exp(w - top).mean(axis=1)))
    return np.concatenate(out)


def active_units(model: VAE, X: np.ndarray, threshold: float = 0.01) -> int:
    """Burda et al.'s activity: unit u is active when Cov_x(E_q[z_u | x]), the
    variance of its posterior mean over the data, exceeds `threshold`. A unit the
    encoder ignores keeps mu at one value for every x: the posterior has collapsed
    onto the prior there."""
    mu, _ = model.encode(X)
    return int((mu.astype(np.float64).var(axis=0) > threshold).sum())


# --8<-- [end:iwae]


def trained(cfg: Config, quick: bool, history: list | None = None, seed: int = 0):
    """A VAE trained on the binarised digits with SETTINGS (quick: one epoch on
    256 pictures, for the CPU backend). Appends (epoch, reconstruction, KL) on
    the held-out set to `history` after each epoch. Returns the model and the
    held-out pictures with their labels."""
    from thousand.models.data import digits

    X_train, X_test, _, y_test = digits()
    X_train, X_test = (
        (X_train > 0.5).astype(np.float32),
        (X_test > 0.5).astype(np.float32),
    )  # rbm.binary_digits: a pixel is on when darker than 8/16
    epochs = 1 if quick else SETTINGS["epochs"]
    if quick:
        X_train = X_train[:256]
    model = VAE(cfg, init(cfg, seed), seed=seed, lr=SETTINGS["lr"])
    log = None if history is None else lambda *row: history.append(row)
    train(
        model,
        X_train,
        epochs=epochs,
        batch=SETTINGS["batch"],
        seed=seed,
        X_test=X_test,
        log=log,
    )
    return model, X_test, y_test


def eps_for(model: VAE, rows: int, offset: int) -> np.ndarray:
    """The eps the kernels draw for `rows` pictures from counter `offset`: the
    PyTorch twin gets exactly these."""
    n = rows * model.cfg.latent
    return normal_ref(n, model.seed, offset).reshape(rows, model.cfg.latent)


if __name__ == "__main__":
    from thousand.models.rbm import binary_digits

    X_train, X_test = binary_digits()
    cfg = Config(latent=SETTINGS["latent"])
    vae = VAE(cfg, init(cfg, seed=0), seed=0, lr=SETTINGS["lr"])
    train(
        vae,
        X_train,
        epochs=3,
        batch=SETTINGS["batch"],
        seed=0,
        X_test=X_test,
        log=lambda e, r, k: print(f"epoch {e}: reconstruction {r:.2f}, KL {k:.2f}"),
    )
    print(f"log p(x), k = 20: {log_likelihood(vae, X_test[:64], 20).mean():.2f} nats")
