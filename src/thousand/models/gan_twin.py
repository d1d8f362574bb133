"""The PyTorch twin of gan.py: the same two games written as a PyTorch user writes
them (nn.ConvTranspose2d where the kernels call conv_backward_data), loaded with
the same weights, fed the same batches and noise, trained with torch.optim.Adam.
The tests compare the two step by step; on the GPU it is the speed baseline
(PyTorch's own kernels, float32, TF32 off)."""

from __future__ import annotations

import numpy as np

from thousand.models.gan import GAMES, LOSSES, Config
from thousand.optional import require

torch = require("torch", "The PyTorch twin of the GANs")
F, nn = torch.nn.functional, torch.nn


def _nets(cfg: Config):
    if cfg.game == "ring":
        H = 128

        def mlp(n_in):
            return nn.Sequential(
                nn.Linear(n_in, H),
                nn.ReLU(),
                nn.Linear(H, H),
                nn.ReLU(),
                nn.Linear(H, 2),
            )

        return mlp(cfg.z), mlp(2)
    G = nn.Sequential(
        nn.Linear(cfg.z, 256),
        nn.ReLU(),
        nn.Unflatten(1, (64, 2, 2)),  # NCHW; the kernels' NHWC is permuted on load
        nn.ConvTranspose2d(64, 32, 4, stride=2, padding=1),
        nn.ReLU(),
        nn.ConvTranspose2d(32, 1, 4, stride=2, padding=1),
        nn.Tanh(),
    )
    D = nn.Sequential(
        nn.Conv2d(1, 32, 4, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(32, 64, 4, stride=2, padding=1),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(256, 2),
    )
    return G, D


def _nhwc_dense(W: np.ndarray, C: int, H: int, Wd: int, rows: bool) -> np.ndarray:
    """A dense weight whose outputs (rows=False) or inputs (rows=True) are an
    H x W x C image in NHWC, reordered to NCHW's C x H x W."""
    if rows:
        n_out = W.shape[1]
        return W.reshape(H, Wd, C, n_out).transpose(2, 0, 1, 3).reshape(-1, n_out)
    n_in = W.shape[0]
    return W.reshape(n_in, H, Wd, C).transpose(0, 3, 1, 2).reshape(n_in, -1)


def _load(cfg: Config, G, D, params: dict):
    def lin(m, W, b):
        m.weight.data = torch.tensor(np.ascontiguousarray(W.T))
        m.bias.data = torch.tensor(b)

    def conv(m, K, b):  # K is R x S x C x F; both Conv2d and ConvTranspose2d: F C R S
        m.weight.data = torch.tensor(np.ascontiguousarray(K.transpose(3, 2, 0, 1)))
        m.bias.data = torch.tensor(b)

    (g0, g1, g2), (d0, d1, d2) = params["G"], params["D"]
    if cfg.game == "ring":
        for m, p in zip(
            [G[0], G[2], G[4], D[0], D[2], D[4]], [g0, g1, g2, d0, d1, d2], strict=True
        ):
            lin(m, *p)
        return
    lin(G[0], _nhwc_dense(g0[0], 64, 2, 2, rows=False), _nhwc_b(g0[1], 64, 2, 2))
    conv(G[3], *g1)
    conv(G[5], *g2)
    conv(D[0], *d0)
    conv(D[2], *d1)
    lin(D[5], _nhwc_dense(d2[0], 64, 2, 2, rows=True), d2[1])


def _nhwc_b(b: np.ndarray, C: int, H: int, W: int) -> np.ndarray:
    return np.ascontiguousarray(b.reshape(H, W, C).transpose(2, 0, 1).reshape(-1))


class GAN:
    """gan.GAN's three calls (d_step, g_step, sample) and params, in PyTorch."""

    def __init__(
        self,
        cfg: Config,
        params: dict,
        loss: str = "non-saturating",
        device: str = "cpu",
    ):
        if not isinstance(cfg, Config) or cfg.game not in GAMES:
            raise ValueError(f"gan_twin.GAN: `cfg` must be a gan.Config, got {cfg!r}")
        if loss not in LOSSES:
            raise ValueError(f"gan_twin.GAN: `loss` is {loss!r}; losses are {LOSSES}")
        self.cfg, self.loss_kind, self.device = cfg, loss, device
        self.G, self.D = _nets(cfg)
        _load(cfg, self.G, self.D, params)
        self.G.to(device)
        self.D.to(device)
        betas = (cfg.beta1, 0.999)
        self.opt_G = torch.optim.Adam(self.G.parameters(), cfg.lr, betas=betas)
        self.opt_D = torch.optim.Adam(self.D.parameters(), cfg.lr, betas=betas)

    def _t(self, a):
        t = torch.tensor(np.ascontiguousarray(a, np.float32), device=self.device)
        if self.cfg.game == "digits" and t.shape[-1] == 64 and t.ndim == 2:
            t = t.view(-1, 1, 8, 8)  # a batch of real images, rows of 64 pixels
        return t

    def _logits(self, X):
        return self.D(X)

    def d_step(self, real, z):
        B = self.cfg.batch
        fake = self.G(self._t(z)).detach()
        real = self._t(real).view(fake.shape)
        Z = self.D(torch.cat([real, fake]))
        labels = torch.cat([torch.ones(B), torch.zeros(B)]).long().to(self.device)
        loss = F.cross_entropy(Z, labels)
        self.opt_D.zero_grad()
        loss.backward()
        self.opt_D.step()
        return loss.detach()

    def g_step(self, z):
        B = self.cfg.batch
        Z = self.D(self.G(self._t(z)))
        if self.loss_kind == "non-saturating":
            loss = F.cross_entropy(
                Z, torch.ones(B, dtype=torch.long, device=self.device)
            )
        else:  # descend log(1 - D): the fake label's cross-entropy, ascended
            loss = F.cross_entropy(
                Z, torch.zeros(B, dtype=torch.long, device=self.device)
            )
        self.opt_G.zero_grad()
        (loss if self.loss_kind == "non-saturating" else -loss).backward()
        self.opt_G.step()  # D's gradients too were made; its optimiser clears them
        return loss.detach()

    @torch.no_grad()
    def sample(self, z) -> np.ndarray:
        Y = self.G(self._t(z))
        if self.cfg.game == "digits":
            Y = Y.permute(0, 2, 3, 1)  # NHWC, as the kernels give it
        return Y.cpu().numpy()

    def params(self) -> dict:
        """In gan.init's layout (NHWC order, R x S x C x F kernels)."""

        def w(m):
            return (
                m.weight.detach().cpu().numpy().T.copy(),
                m.bias.detach().cpu().numpy(),
            )

        def k(m):
            K = m.weight.detach().cpu().numpy().transpose(2, 3, 1, 0).copy()
            return K, m.bias.detach().cpu().numpy()

        G, D = self.G, self.D
        if self.cfg.game == "ring":
            return {"G": [w(G[0]), w(G[2]), w(G[4])], "D": [w(D[0]), w(D[2]), w(D[4])]}
        W0, b0 = w(G[0])  # n_in x (C H W) -> n_in x (H W C)
        n_in = W0.shape[0]
        W0 = W0.reshape(n_in, 64, 2, 2).transpose(0, 2, 3, 1).reshape(n_in, -1)
        b0 = b0.reshape(64, 2, 2).transpose(1, 2, 0).reshape(-1)
        W2, b2 = w(D[5])
        W2 = W2.reshape(64, 2, 2, -1).transpose(1, 2, 0, 3).reshape(256, -1)
        return {"G": [(W0, b0), k(G[3]), k(G[5])], "D": [k(D[0]), k(D[2]), (W2, b2)]}

    def sync(self):
        if self.device != "cpu":
            torch.cuda.synchronize()
