"""The PyTorch twin of vae.py: the same layers, loaded with the same weights,
trained on the same batches with torch.optim.Adam, and fed the very eps the
kernels draw (the reparam_kl family's NumPy reference, normal_ref, on the host),
so the two can be compared step by step. Autograd does the backward pass, which
makes it an independent check of reparam_kl_backward and of the layers' own
gradients.
"""

from __future__ import annotations

import numpy as np

from thousand.kernels.reparam_kl import normal_ref
from thousand.models.vae import LAYERS, Config
from thousand.optional import require

torch = require("torch", "The PyTorch twin of the VAE")
F = torch.nn.functional


# --8<-- [start:twin]
class TorchVAE(torch.nn.Module):
    def __init__(self, cfg: Config, params: dict, seed: int = 0, lr: float = 2e-3):
        super().__init__()
        self.cfg, self.seed = cfg, seed
        self.p = torch.nn.ParameterDict(
            {
                f"{n}_{k}": torch.nn.Parameter(torch.tensor(a))
                for n in LAYERS
                for k, a in zip("Wb", params[n], strict=True)
            }
        )
        self.opt = torch.optim.Adam(
            self.p.values(), lr=lr, betas=(0.9, 0.999), eps=1e-8
        )
        self.drawn = 0  # the kernels' Philox counter, followed step by step

    def linear(self, name, x):
        return x @ self.p[f"{name}_W"] + self.p[f"{name}_b"]

    def loss(self, x, eps):
        """Mean over the batch of reconstruction + beta * KL, and both terms."""
        h = F.relu(self.linear("enc", x))
        mu, logvar = self.linear("mu", h), self.linear("logvar", h)
        z = mu + torch.exp(0.5 * logvar) * eps  # the reparameterisation
        kl = 0.5 * (mu * mu + logvar.exp() - 1 - logvar).sum(dim=1)
        logits = self.linear("out", F.relu(self.linear("dec", z)))
        rec = F.binary_cross_entropy_with_logits(logits, x, reduction="none").sum(1)
        return (rec + self.cfg.beta * kl).mean(), rec, kl

    def step(self, X: np.ndarray):
        B, L = X.shape[0], self.cfg.latent
        eps = normal_ref(B * L, self.seed, self.drawn).reshape(B, L)
        self.drawn += B * L
        self.opt.zero_grad()
        loss, rec, kl = self.loss(
            torch.tensor(X), torch.tensor(eps, dtype=torch.float32)
        )
        loss.backward()
        self.opt.step()
        return float(rec.detach().mean()), float(kl.detach().mean())

    # --8<-- [end:twin]

    def host_params(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        return {
            n: tuple(self.p[f"{n}_{k}"].detach().numpy().copy() for k in "Wb")
            for n in LAYERS
        }
