"""The PyTorch twin of gpt.py: transformer_twin's GPT with the output layer tied
to the token embedding, as GPT-2 and nanoGPT tie it (logits = x wte^T). Loaded
with the same weights, it is both the check of every gradient and, on the GPU,
the speed baseline (PyTorch eager, float32, TF32 off)."""

from __future__ import annotations

from thousand.models import transformer_twin as TT  # says how to install torch


class GPT(TT.GPT):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.head = None  # the head is wte itself

    def project(self, x):
        return TT.F.linear(x, self.wte.weight)


class Trainer(TT.Trainer):
    Model = GPT
