"""The PyTorch twin of models/rnn.py: torch.nn.LSTM or torch.nn.RNN (tanh) with the
same weights, the same read-out, loss, clipping and AdamW step.

PyTorch keeps two biases, b_ih and b_hh, that are always added together; the twin
puts ours in b_ih and freezes b_hh at zero, so the two networks have the same
parameters and take the same steps. Its weights are the transposes of ours:
weight_ih_l0 is (4H, n_in) where W_ih is (n_in, 4H), gates in the same order.
"""

from __future__ import annotations

import numpy as np

from thousand.models.rnn import Config


class Twin:
    def __init__(self, cfg: Config, p: dict[str, np.ndarray], device="cpu"):
        import torch

        self.torch, self.cfg = torch, cfg
        cls = torch.nn.LSTM if cfg.kind == "lstm" else torch.nn.RNN
        self.rnn = cls(cfg.n_in, cfg.hidden).to(device)  # time-major by default
        self.head = torch.nn.Linear(cfg.hidden, cfg.n_out).to(device)
        with torch.no_grad():
            self.rnn.weight_ih_l0.copy_(torch.from_numpy(p["W_ih"].T.copy()))
            self.rnn.weight_hh_l0.copy_(torch.from_numpy(p["W_hh"].T.copy()))
            self.rnn.bias_ih_l0.copy_(torch.from_numpy(p["b"]))
            self.rnn.bias_hh_l0.zero_()
            self.head.weight.copy_(torch.from_numpy(p["W_out"].T.copy()))
            self.head.bias.copy_(torch.from_numpy(p["b_out"]))
        self.rnn.bias_hh_l0.requires_grad_(False)
        self.params = [
            self.rnn.weight_ih_l0,
            self.rnn.weight_hh_l0,
            self.rnn.bias_ih_l0,
            self.head.weight,
            self.head.bias,
        ]
        self.opt = torch.optim.AdamW(self.params, lr=cfg.lr, weight_decay=0.0)
        self.device = device

    def forward(self, X: np.ndarray, ids: np.ndarray, scored: int):
        """X (T, B, n_in) float32 and target ids (T - scored, B); the mean loss."""
        torch = self.torch
        x = torch.from_numpy(X).to(self.device)
        out, _ = self.rnn(x)  # (T, B, H)
        self.out = out
        out.retain_grad()  # dL/dh_t of every step, for the gradient's decay
        z = self.head(out[scored:]).reshape(-1, self.cfg.n_out)
        y = torch.from_numpy(ids.reshape(-1).astype(np.int64)).to(self.device)
        return torch.nn.functional.cross_entropy(z, y)

    def step(self, X, ids, scored: int) -> float:
        self.opt.zero_grad()
        loss = self.forward(X, ids, scored)
        loss.backward()
        self.torch.nn.utils.clip_grad_norm_(self.params, self.cfg.clip)
        self.opt.step()
        return float(loss.detach())

    def host_params(self) -> dict[str, np.ndarray]:
        r, h = self.rnn, self.head
        pairs = {
            "W_ih": r.weight_ih_l0.T,
            "W_hh": r.weight_hh_l0.T,
            "b": r.bias_ih_l0,
            "W_out": h.weight.T,
            "b_out": h.bias,
        }
        return {k: v.detach().cpu().numpy().copy() for k, v in pairs.items()}
