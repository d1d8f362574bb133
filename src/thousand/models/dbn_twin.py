"""The PyTorch twin of the fine-tuned DBN (dbn.network): the same dense layers
as torch.nn.Linear with sigmoid or ReLU between them, loaded with the same
weights and trained on the same batches with plain SGD on softmax
cross-entropy. It has the interface mlp.fit and mlp.accuracy use, so the one
training loop drives both; the tests compare the two step by step.
"""

from __future__ import annotations

import numpy as np

from thousand.models.dbn import _params
from thousand.optional import require

torch = require("torch", "The PyTorch twin of the fine-tuned DBN")
F, nn = torch.nn.functional, torch.nn

ACTIVATIONS = {"sigmoid": nn.Sigmoid, "relu": nn.ReLU, "tanh": nn.Tanh}


class Twin:
    def __init__(self, params, hidden: str, device: str = "cpu"):
        if hidden not in ACTIVATIONS:
            raise ValueError(
                f"hidden must be one of {sorted(ACTIVATIONS)}, got {hidden!r}"
            )
        if not isinstance(device, str):
            raise TypeError(f"device must be a string such as 'cpu', not {device!r}")
        _params(params)  # float32 (W, b) pairs, each layer feeding the next
        modules = []
        for i, (W, b) in enumerate(params):
            linear = nn.Linear(*W.shape)
            with torch.no_grad():  # ours is X W + b, torch's X W^T + b
                linear.weight.copy_(torch.from_numpy(np.ascontiguousarray(W.T)))
                linear.bias.copy_(torch.from_numpy(np.asarray(b)))
            modules.append(linear)
            if i < len(params) - 1:
                modules.append(ACTIVATIONS[hidden]())
        self.model = nn.Sequential(*modules).to(device)
        self.linears = [m for m in self.model if isinstance(m, nn.Linear)]
        self.device = device
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def _tensor(self, a):
        return torch.as_tensor(np.ascontiguousarray(a, np.float32), device=self.device)

    def backward(self, X, T):
        """Forward, loss, backward; the gradients stay in .grad. Returns the
        per-row losses."""
        self.model.train()
        losses = F.cross_entropy(
            self.model(self._tensor(X)), self._tensor(T), reduction="none"
        )
        self.opt.zero_grad(set_to_none=False)
        losses.mean().backward()
        return losses.detach()

    def train_step(self, X, T, lr):
        losses = self.backward(X, T)
        for g in self.opt.param_groups:
            g["lr"] = lr
        self.opt.step()
        return losses

    def logits(self, X):
        self.model.eval()
        with torch.no_grad():
            return self.model(self._tensor(X)).cpu().numpy()

    def mean_loss(self, X, T):
        with torch.no_grad():
            losses = F.cross_entropy(
                self.model(self._tensor(X)), self._tensor(T), reduction="none"
            )
        return float(losses.double().mean())

    def get_params(self) -> list[tuple]:
        """(W, b) per layer in our layout (W is n_in x n_out)."""
        return [
            (m.weight.detach().cpu().numpy().T.copy(), m.bias.detach().cpu().numpy())
            for m in self.linears
        ]

    def get_grads(self) -> list[tuple]:
        return [
            (m.weight.grad.cpu().numpy().T.copy(), m.bias.grad.cpu().numpy().copy())
            for m in self.linears
        ]
