"""The PyTorch twin of transformer.py: the same GPT, written as a PyTorch user
writes it (nanoGPT's layout), loaded with the same weights and trained on the same
batches with torch.optim.AdamW. The tests compare the two step by step; on the GPU
it is the speed baseline (PyTorch's own kernels, float32, TF32 off).
"""

from __future__ import annotations

import numpy as np

from thousand.kernels.layer_norm import EPS
from thousand.models.transformer import Config
from thousand.optional import require

# torch is optional: without it, an error that says how to install it
torch = require("torch", "The PyTorch twin of the Transformer and the GPT")
F, nn = torch.nn.functional, torch.nn


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        C = cfg.n_embd
        self.qkv, self.attn_proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        self.n_head = cfg.n_head

    def forward(self, x):  # (B, T, C)
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (a.view(B, T, self.n_head, -1).transpose(1, 2) for a in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, d)
        return self.attn_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        C = cfg.n_embd
        self.ln1, self.attn = nn.LayerNorm(C, eps=EPS), CausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(C, eps=EPS)
        self.fc, self.mlp_proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp_proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.wte = nn.Embedding(cfg.vocab, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.h = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd, eps=EPS)
        self.head = nn.Linear(cfg.n_embd, cfg.vocab)

    def forward(self, idx, targets, weights):
        """The loss sum w * (-log p(target)) (weights summing to 1), and the
        logits (B, T, V)."""
        T = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(T, device=idx.device))
        for block in self.h:
            x = block(x)
        logits = self.project(self.ln_f(x))
        rows = F.cross_entropy(
            logits.flatten(0, 1), targets.flatten(), reduction="none"
        )
        return (rows * weights.flatten()).sum(), logits

    def project(self, x):
        return self.head(x)  # (B, T, C) -> (B, T, V)


def named(model: GPT) -> dict[str, tuple]:
    """transformer.init's name -> (the parameter, whether it is stored transposed:
    a linear layer's weight is (in, out) there and (out, in) in nn.Linear)."""
    out = {"wte": (model.wte.weight, False), "wpe": (model.wpe.weight, False)}
    layers = [
        (f"h{i}.{name}", m)
        for i, b in enumerate(model.h)
        for name, m in (
            ("ln1", b.ln1),
            ("qkv", b.attn.qkv),
            ("attn_proj", b.attn.attn_proj),
            ("ln2", b.ln2),
            ("fc", b.fc),
            ("mlp_proj", b.mlp_proj),
        )
    ]
    heads = [] if model.head is None else [("head", model.head)]  # None: tied
    for stem, m in [*layers, ("ln_f", model.ln_f), *heads]:
        norm = isinstance(m, nn.LayerNorm)
        out[f"{stem}.{'g' if norm else 'W'}"] = (m.weight, not norm)
        out[f"{stem}.b"] = (m.bias, False)
    return out


def host(t, transposed: bool) -> np.ndarray:
    a = t.detach().cpu().numpy()
    return np.ascontiguousarray(a.T) if transposed else a


class Trainer:
    """The twin behind the calls transformer.fit makes."""

    Model = GPT  # gpt_twin's Trainer trains the tied GPT

    def __init__(
        self, cfg, p, device="cpu", betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1
    ):
        self.device = torch.device(device)
        self.model = self.Model(cfg).to(self.device)
        self.named = named(self.model)
        with torch.no_grad():
            for name, (t, transposed) in self.named.items():
                a = p[name].T if transposed else p[name]
                t.copy_(torch.from_numpy(np.ascontiguousarray(a)))
        ts = [t for t, _ in self.named.values()]
        groups = [  # nanoGPT's: weight decay on the matrices only
            {"params": [t for t in ts if t.dim() == 2], "weight_decay": weight_decay},
            {"params": [t for t in ts if t.dim() < 2], "weight_decay": 0.0},
        ]
        self.opt = torch.optim.AdamW(groups, betas=betas, eps=eps)  # its default path

    def tensors(self, batch):
        idx, targets, weights = batch
        w = weights / weights.sum(dtype=np.float64)
        idx, targets, w = (torch.from_numpy(np.asarray(a)) for a in (idx, targets, w))
        dev = self.device
        return (
            idx.to(dev, torch.long),
            targets.to(dev, torch.long),
            w.to(dev, torch.float32),
        )

    def loss(self, batch):
        """Forward and backward: the loss and logits; every .grad set."""
        self.opt.zero_grad(set_to_none=True)
        loss, logits = self.model(*self.tensors(batch))
        loss.backward()
        return loss.detach(), logits.detach()

    def step(self, batch, lr: float):
        for g in self.opt.param_groups:
            g["lr"] = lr
        loss, _ = self.loss(batch)
        self.opt.step()
        return loss

    @torch.no_grad()
    def predict(self, idx):
        B, T = idx.shape
        zeros = np.zeros((B, T), np.float32)
        _, logits = self.model(*self.tensors((idx, idx, zeros + 1)))
        return logits.argmax(dim=2).cpu().numpy()

    def sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize()

    def read(self, loss) -> float:
        return float(loss)

    def params(self) -> dict[str, np.ndarray]:
        """Each parameter under transformer.init's name, in its layout."""
        return {name: host(t, tr) for name, (t, tr) in self.named.items()}

    def grads(self) -> dict[str, np.ndarray]:
        return {name: host(t.grad, tr) for name, (t, tr) in self.named.items()}
