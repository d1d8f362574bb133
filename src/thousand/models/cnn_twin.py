"""The PyTorch twin of deep_cnns.py's networks: the same spec built from
torch.nn's layers (NCHW, as PyTorch users write them; cuDNN's convolutions on the
GPU), loaded with the same weights and trained on the same batches with plain SGD.
The tests compare the two step by step; on the GPU it is the speed baseline
(float32, TF32 off).

Dropout: with `same_masks` the twin draws the kernels' own masks (the dropout
family's NumPy reference, on the host: for the step-by-step comparison);
otherwise torch's dropout (for timing: the masks differ, the distribution not).
Batch norm's evaluation statistics come from calibrate, as in cnn.py: PyTorch's
BatchNorm with momentum=None averages the batches it sees in training mode.
"""

from __future__ import annotations

import numpy as np

from thousand.optional import require

torch = require("torch", "The PyTorch twin of the deep CNNs")
F, nn = torch.nn.functional, torch.nn


class KernelDropout(nn.Module):
    """Dropout with the kernels' counter-based masks: the same (seed, offset),
    the same zeros."""

    def __init__(self, p, seed, same_masks):
        super().__init__()
        self.p, self.seed, self.same_masks = p, seed, same_masks
        self.counter = 0

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        if not self.same_masks:
            return F.dropout(x, self.p, training=True)
        from thousand.kernels.dropout import dropout_ref

        # the kernels see NHWC (or N x features): the mask is made in that layout
        shape = x.shape if x.dim() == 2 else (x.shape[0], *x.shape[2:], x.shape[1])
        scale = dropout_ref(np.ones(shape, np.float32), self.p, self.seed, self.counter)
        self.counter += int(np.prod(shape))
        mask = torch.as_tensor(np.asarray(scale, np.float32), device=x.device)
        if x.dim() == 4:
            mask = mask.permute(0, 3, 1, 2)
        return x * mask


class Act(nn.Module):
    def __init__(self, activation):
        super().__init__()
        self.activation = activation

    def forward(self, x):
        if self.activation == "relu":
            return F.relu(x)
        if self.activation == "tanh":
            return torch.tanh(x)
        return x


class FlattenNHWC(nn.Module):
    """The kernels flatten (h, w, c); PyTorch's maps are (c, h, w)."""

    def forward(self, x):
        return x.permute(0, 2, 3, 1).flatten(1)


class Residual(nn.Module):
    def __init__(self, body, shortcut):
        super().__init__()
        self.body, self.shortcut = body, shortcut

    def forward(self, x):
        return F.relu(self.body(x) + self.shortcut(x))


def _modules(spec, same_masks, order):
    """nn.Modules for the spec; `order` collects (parameter, to our layout) in
    the order cnn.CNN.flat_params lists them."""
    out = []
    for kind, s in spec:
        if kind == "conv":
            K = s["K"]
            R, S, C, Fo = K.shape
            m = nn.Conv2d(C, Fo, R, s["stride"], s["pad"], bias=s["b"] is not None)
            with torch.no_grad():
                m.weight.copy_(torch.from_numpy(K.transpose(3, 2, 0, 1).copy()))
                order.append((m.weight, lambda t: t.permute(2, 3, 1, 0)))
                if s["b"] is not None:
                    m.bias.copy_(torch.from_numpy(s["b"]))
                    order.append((m.bias, lambda t: t))
            out += [m, Act(s["activation"])]
        elif kind == "bn":
            m = nn.BatchNorm2d(s["channels"], eps=1e-5)
            order += [(m.weight, lambda t: t), (m.bias, lambda t: t)]
            out += [m, Act(s["activation"])]
        elif kind == "maxpool":
            out.append(nn.MaxPool2d(s["window"], s["stride"]))
        elif kind == "dropout":
            out.append(KernelDropout(s["p"], s["seed"], same_masks))
        elif kind == "gap":
            out.append(nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten()))
        elif kind == "flatten":
            out.append(FlattenNHWC())
        elif kind == "dense":
            W = s["W"]
            m = nn.Linear(*W.shape)
            with torch.no_grad():
                m.weight.copy_(torch.from_numpy(W.T.copy()))
                m.bias.copy_(torch.from_numpy(s["b"]))
            order += [(m.weight, lambda t: t.T), (m.bias, lambda t: t)]
            out += [m, Act(s["activation"])]
        elif kind == "residual":
            body = nn.Sequential(*_modules(s["body"], same_masks, order))
            short = nn.Sequential(*_modules(s["shortcut"], same_masks, order))
            out.append(Residual(body, short))
        else:
            raise ValueError(f"unknown layer kind {kind!r}")
    return out


class Twin:
    """The spec in PyTorch with the interface fit() and the tests use."""

    def __init__(self, spec, batch: int, device="cpu", same_masks=False):
        self.order: list = []
        self.model = nn.Sequential(*_modules(spec, same_masks, self.order))
        self.model.to(device)
        self.batch, self.device = batch, device
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.batch_norms = [
            m for m in self.model.modules() if isinstance(m, nn.BatchNorm2d)
        ]

    def _images(self, X):
        return torch.as_tensor(X, device=self.device).permute(0, 3, 1, 2)

    def train_step(self, X, T, lr):
        self.model.train()
        for g in self.opt.param_groups:
            g["lr"] = lr
        logits = self.model(self._images(X))
        target = torch.as_tensor(T, device=self.device)
        loss = F.cross_entropy(logits, target.argmax(dim=1))
        self.opt.zero_grad(set_to_none=False)
        loss.backward()
        self.opt.step()
        return loss

    def calibrate(self, X, batches=8):
        """As cnn.CNN.calibrate: batch norm's statistics averaged over the first
        `batches` full batches, everything else in evaluation mode."""
        self.model.eval()
        if not self.batch_norms:
            return
        for bn in self.batch_norms:
            bn.reset_running_stats()
            bn.momentum = None  # a cumulative average of the batches
            bn.train()
        n = min(batches, len(X) // self.batch)
        with torch.no_grad():
            for i in range(n):
                self.model(self._images(X[i * self.batch : (i + 1) * self.batch]))
        self.model.eval()

    def logits(self, X):
        self.model.eval()
        with torch.no_grad():
            return self.model(self._images(X)).cpu().numpy()

    def mean_loss(self, X, T):
        Z = self.logits(X).astype(np.float64)
        Z -= Z.max(axis=1, keepdims=True)
        log_p = Z - np.log(np.exp(Z).sum(axis=1, keepdims=True))
        return float(-(T * log_p).sum(axis=1).mean())

    def sync(self):
        if self.device != "cpu":
            torch.cuda.synchronize()

    def flat_params(self) -> list[np.ndarray]:
        return [to_ours(p).detach().cpu().numpy().copy() for p, to_ours in self.order]

    def flat_grads(self) -> list[np.ndarray]:
        return [
            to_ours(p.grad).detach().cpu().numpy().copy() for p, to_ours in self.order
        ]


def network(spec, batch: int, device="cpu", same_masks=False) -> Twin:
    return Twin(spec, batch, device, same_masks)
