"""Recurrent networks on the package's kernels: Elman's network and the LSTM.

Time-major throughout: a batch of sequences is (T, B, n) so that step t is one
contiguous (B, n) block, and the last S steps are one contiguous (S*B, n) block.
A layer's forward precomputes the input projection of all T steps as one GEMM, then
runs T steps of one GEMM by W_hh and one fused step kernel; its backward runs the
steps in reverse (backpropagation through time) and sums the weight gradients over
all steps with one GEMM each at the end. The same code runs on the GPU and on the
CPU backend; models/rnn_twin.py is the same network in PyTorch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from thousand.cuda import Replay, Uploader, empty, fill, to_device
from thousand.kernels.adamw import adamw, hyper_parameters
from thousand.kernels.bias_add import bias_add
from thousand.kernels.clip_norm import clip_global_norm
from thousand.kernels.copy import copy
from thousand.kernels.elman_step import elman_step
from thousand.kernels.lstm_cell import lstm_cell
from thousand.kernels.lstm_cell_backward import lstm_cell_backward
from thousand.kernels.matmul import matmul
from thousand.kernels.matmul_tn import matmul_tn
from thousand.kernels.matrix_add import matrix_add
from thousand.kernels.tanh_backward import tanh_backward
from thousand.kernels.transpose import transpose
from thousand.models.layers import Buffers, Dense, SoftmaxCrossEntropy

KINDS = {"elman": 1, "lstm": 4}  # rows of W_hh's output per hidden unit


@dataclass(frozen=True)
class Config:
    kind: str = "lstm"  # "elman" or "lstm"
    n_in: int = 10  # input width (one-hot symbols)
    hidden: int = 64
    n_out: int = 10
    forget_bias: float = 1.0  # LSTM only: start with f near sigma(1) (Gers et al.)
    clip: float = 1.0  # global norm of the gradient, at most
    lr: float = 3e-3

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {sorted(KINDS)}, got {self.kind!r}")
        for name in ("n_in", "hidden", "n_out"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an int >= 1, got {v!r}")
        for name in ("clip", "lr"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not v > 0:
                raise ValueError(f"{name} must be a positive number, got {v!r}")


def init_params(cfg: Config, seed: int = 0) -> dict[str, np.ndarray]:
    """Uniform in +-1/sqrt(hidden), as torch.nn.LSTM and torch.nn.RNN start."""
    rng = np.random.default_rng(seed)
    G = KINDS[cfg.kind] * cfg.hidden  # gate rows: H for Elman, 4H for the LSTM
    k = 1 / np.sqrt(cfg.hidden)

    def u(*shape):
        return rng.uniform(-k, k, shape).astype(np.float32)

    b = u(G)
    if cfg.kind == "lstm":
        b[cfg.hidden : 2 * cfg.hidden] += cfg.forget_bias
    return {
        "W_ih": u(cfg.n_in, G),
        "W_hh": u(cfg.hidden, G),
        "b": b,
        "W_out": u(cfg.hidden, cfg.n_out),
        "b_out": u(cfg.n_out),
    }


# --8<-- [start:layer]
class Recurrent:
    """An Elman or LSTM layer over whole sequences X (T, B, n_in) on the device."""

    def __init__(self, kind: str, W_ih, W_hh, b):
        self.kind = kind
        self.W_ih, self.W_hh, self.b = to_device(W_ih), to_device(W_hh), to_device(b)
        self.H, self.G = W_hh.shape  # hidden units; gate rows (H or 4H)
        self.buf = Buffers()

    def forward(self, X):
        T, B, n_in = X.shape
        H, G = self.H, self.G
        Gx = self.buf("Gx", (T, B, G))
        flat = Gx.reshape(T * B, G)
        matmul(X.reshape(T * B, n_in), self.W_ih, out=flat)  # every step at once
        bias_add(flat, self.b, out=flat)
        Hs = self.buf("Hs", (T + 1, B, H))  # Hs[0] = h_0 = 0, Hs[t + 1] = h_t
        # Zeros no kernel writes: filled here, they stay zero, so a Replay of the
        # launches (which repeats kernels, not fills) computes the same.
        fill(Hs[0], 0.0)
        fill(self.buf("zeros", (B, H)), 0.0)
        Gh = self.buf("Gh", (B, G))
        if self.kind == "lstm":
            Cs = self.buf("Cs", (T + 1, B, H))
            fill(Cs[0], 0.0)
            acts = self.buf("acts", (T, B, G))
            self.Cs, self.acts = Cs, acts
        for t in range(T):
            matmul(Hs[t], self.W_hh, out=Gh)  # h_{t-1} W_hh: the only serial GEMM
            if self.kind == "lstm":
                lstm_cell(Gx[t], Gh, Cs[t], out=Hs[t + 1], c=Cs[t + 1], acts=acts[t])
            else:
                elman_step(Gx[t], Gh, out=Hs[t + 1])
        self.X, self.Hs = X, Hs
        return Hs

    def backward(self, dHs):
        """dHs (T, B, H): dL/dh_t from the layers above. Sets self.grads = [dW_ih,
        dW_hh, db] and self.dh (T, B, H), the whole dL/dh_t (from above and from
        step t + 1); returns dL/dX."""
        X, Hs = self.X, self.Hs
        T, B, n_in = X.shape
        H, G = self.H, self.G
        dZ = self.buf("dZ", (T, B, G))  # gradient of the pre-activations
        dh = self.buf("dh", (T, B, H))
        W_hhT = transpose(self.W_hh, out=self.buf("W_hhT", (G, H)))
        dh_next = dc_in = self.buf("zeros", (B, H))  # nothing after the last step
        for t in reversed(range(T)):
            matrix_add(dHs[t], dh_next, out=dh[t])  # from above + from step t + 1
            if self.kind == "lstm":
                dc_out = self.buf(f"dc{t % 2}", (B, H))
                lstm_cell_backward(
                    dh[t], dc_in, self.acts[t], self.Cs[t], self.Cs[t + 1],
                    out=dZ[t], dc_prev=dc_out,
                )  # fmt: skip
                dc_in = dc_out
            else:
                tanh_backward(dh[t], Hs[t + 1], out=dZ[t])
            dh_next = self.buf("dh_next", (B, H))
            matmul(dZ[t], W_hhT, out=dh_next)  # to h_{t-1}
        dZf = dZ.reshape(T * B, G)
        db = self.buf("db", (G,))
        dW_ih = matmul_tn(X.reshape(T * B, n_in), dZf, out=self.buf("dW_ih", (n_in, G)))
        dW_hh = matmul_tn(
            Hs[:T].reshape(T * B, H), dZf, out=self.buf("dW_hh", (H, G)), db=db
        )
        self.grads, self.dh = [dW_ih, dW_hh, db], dh
        W_ihT = transpose(self.W_ih, out=self.buf("W_ihT", (G, n_in)))
        return matmul(dZf, W_ihT, out=self.buf("dX", (T * B, n_in))).reshape(T, B, n_in)

    def params(self):
        return [self.W_ih, self.W_hh, self.b]


# --8<-- [end:layer]


# --8<-- [start:model]
class SequenceModel:
    """A recurrent layer, then a linear read-out and softmax cross-entropy on the
    steps from `scored` on (the last S steps of a copy task, every step of a
    language model, the last one for the gradient's decay)."""

    def __init__(self, cfg: Config, p: dict[str, np.ndarray]):
        self.cfg = cfg
        self.rnn = Recurrent(cfg.kind, p["W_ih"], p["W_hh"], p["b"])
        self.head = Dense(p["W_out"], p["b_out"])
        self.xent = SoftmaxCrossEntropy()
        self.buf = Buffers()
        self.names = ["W_ih", "W_hh", "b", "W_out", "b_out"]
        n = [int(np.prod(p[k].shape)) for k in self.names]
        self.m = [to_device(np.zeros(k, np.float32)) for k in n]
        self.v = [to_device(np.zeros(k, np.float32)) for k in n]
        self.sumsq = empty((1,), np.float32)
        self.t = 0
        self.put = Uploader()
        self.replay = None  # (shapes, recorded launches, their loss array)

    def forward(self, X, Y, scored: int):
        """X (T, B, n_in) and one-hot targets Y (T - scored, B, n_out) on the
        device. Returns the per-row losses (device) of the scored steps."""
        T, B, _ = X.shape
        Hs = self.rnn.forward(X)
        S = T - scored
        Z = self.head.forward(Hs[scored + 1 :].reshape(S * B, self.cfg.hidden))
        loss, self.dZ = self.xent(Z, Y.reshape(S * B, self.cfg.n_out))
        self.shape = (T, B, scored)
        return loss

    def backward(self):
        T, B, scored = self.shape
        dH = self.head.backward(self.dZ)  # (S * B, H)
        dHs = self.buf("dHs", (T, B, self.cfg.hidden))
        fill(dHs, 0.0)  # no loss reads the steps before `scored`
        n = dH.size
        copy(dH.reshape(n), out=dHs[scored:].reshape(n))
        self.rnn.backward(dHs)

    def grads(self):
        return self.rnn.grads + self.head.grads

    def params(self):
        return self.rnn.params() + self.head.params()

    def update(self):
        """Clip by global norm, then one AdamW step (no weight decay). The step's
        hyper-parameters are uploaded into one device array, read by the kernels."""
        g = self.grads()
        clip_global_norm(g, self.cfg.clip, self.sumsq)
        self.t += 1
        hyper = self.buf("hyper", (6,))
        self.put(hyper, hyper_parameters(lr=self.cfg.lr, weight_decay=0.0, t=self.t))
        for p, gi, m, v in zip(self.params(), g, self.m, self.v, strict=True):
            n = m.shape[0]
            pf, gf = p.reshape(n), gi.reshape(n)
            adamw(pf, gf, m, v, hyper, out=(pf, m, v))

    def step(self, X, Y, scored: int, wait: bool = True) -> float | None:
        """One training step on host arrays X (T, B, n_in) and Y (T - scored, B,
        n_out); returns the mean loss (a host float: the one wait per step), or
        None with wait=False, which lets the host queue the next step at once. The
        batch goes into device arrays kept for its shape; the first step on them
        records its launches and later steps replay them (Replay: no Python checks
        per launch), with the batch and the step number uploaded first."""
        key = (X.shape, Y.shape, scored)
        dX, dY = self.buf("X", X.shape), self.buf("Y", Y.shape)
        self.put(dX, X)
        self.put(dY, Y)
        if self.replay is not None and self.replay[0] == key:
            self.t += 1
            hyper = hyper_parameters(lr=self.cfg.lr, weight_decay=0.0, t=self.t)
            self.put(self.buf("hyper", (6,)), hyper)
            self.replay[1]()
            return float(self.replay[2].get().mean()) if wait else None
        with Replay() as launches:
            loss = self.forward(dX, dY, scored)
            self.backward()
            self.update()
        self.replay = (key, launches, loss)
        return float(loss.get().mean()) if wait else None


# --8<-- [end:model]


def one_hot(ids: np.ndarray, n: int) -> np.ndarray:
    """(T, B) int ids -> (T, B, n) float32 one-hot rows."""
    out = np.zeros(ids.shape + (n,), np.float32)
    np.put_along_axis(out, ids[..., None], 1.0, axis=-1)
    return out


# --8<-- [start:copy-task]
def copy_task(rng, B: int, lag: int, S: int = 5, K: int = 8):
    """Hochreiter & Schmidhuber's copy memory problem: S symbols from K, then `lag`
    blanks, then a cue; the net must output the S symbols after the cue. Symbols are
    0..K-1, blank K, cue K+1: inputs and outputs have K + 2 classes. Returns time-
    major one-hot inputs (T, B, K+2), the S targets' one-hot rows (S, B, K+2) and
    their ids (S, B); T = S + lag + S steps, the cue on the last blank."""
    T = S + lag + S
    seq = rng.integers(0, K, (S, B))
    ids = np.full((T, B), K)
    ids[:S] = seq
    ids[S + lag - 1] = K + 1  # the cue: answer from the next step on
    return one_hot(ids, K + 2), one_hot(seq, K + 2), seq


# --8<-- [end:copy-task]
