"""A14: a GPT-style Transformer (decoder only, pre-norm, as GPT-2 and nanoGPT) on
the package's kernels: every operation on a device array in a training step is one
of them, forward, backward and the AdamW step.

    tokens -> embedding (wte[idx] + wpe[t])
           -> n_layer x [ x + proj(attention(heads(qkv(ln1(x)))));
                          x + proj(gelu(fc(ln2(x)))) ]
           -> ln_f -> head -> cross-entropy, weighted per position

What differs from GPT-2: the head is its own matrix with a bias (GPT-2 ties it to
wte, whose gradient would then come from two places), and there is no dropout.
The loss is a weighted mean over positions, so that a task can score only the
answer. The PyTorch twin is transformer_twin.py; the task, reversing digits, is
data.reversal.

python -m thousand.models.train transformer
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from thousand.cuda import empty, synchronize, to_device
from thousand.kernels.adamw import adamw, hyper_parameters
from thousand.kernels.attention import attention
from thousand.kernels.attention_backward import attention_backward
from thousand.kernels.cross_entropy import cross_entropy
from thousand.kernels.cross_entropy_backward import cross_entropy_backward
from thousand.kernels.embedding import check_token_ids, embedding
from thousand.kernels.embedding_backward import embedding_backward
from thousand.kernels.gelu import gelu
from thousand.kernels.gelu_backward import gelu_backward
from thousand.kernels.layer_norm import layer_norm
from thousand.kernels.layer_norm_backward import layer_norm_backward
from thousand.kernels.matmul import matmul
from thousand.kernels.matrix_add import matrix_add
from thousand.kernels.merge_heads import merge_heads
from thousand.kernels.split_heads import split_heads
from thousand.models.layers import Buffers, Dense


# --8<-- [start:config]
@dataclass(frozen=True)
class Config:
    vocab: int  # tokens
    block_size: int  # the longest sequence: rows of wpe
    n_layer: int
    n_head: int
    n_embd: int  # C; each head has C / n_head of it


# Reversing 10 digits (data.reversal): 20 tokens in, 11 kinds (0-9 and SEP).
TASK = {
    "digits": 10,
    "config": Config(vocab=11, block_size=20, n_layer=2, n_head=4, n_embd=128),
    "batch": 64,
    "steps": 300,  # every held-out sequence is right after about 50 (the twin, CPU)
    "lr": 1e-3,
    "every": 10,  # steps between two points of the curve
    "held_out": 1000,  # sequences
}
# A run that only shows the code works, for the CPU backend (it learns little)
QUICK = {
    "digits": 4,
    "config": Config(vocab=11, block_size=8, n_layer=1, n_head=2, n_embd=32),
    "batch": 8,
    "steps": 6,
    "lr": 1e-3,
    "every": 3,
    "held_out": 32,
}


def init(cfg: Config, seed: int) -> dict[str, np.ndarray]:
    """GPT-2's initialisation: weights N(0, 0.02^2), and 0.02 / sqrt(2 n_layer) for
    the two projections that add into the residual stream (so its variance does
    not grow with depth); biases 0; layer norms scale 1, shift 0. A linear layer's
    weight is (in, out): y = x W + b."""
    rng = np.random.default_rng(seed)
    C, V = cfg.n_embd, cfg.vocab

    def normal(shape, std=0.02):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    zeros, ones = (
        (lambda n: np.zeros(n, np.float32)),
        (lambda n: np.ones(n, np.float32)),
    )
    resid = 0.02 / np.sqrt(2 * cfg.n_layer)
    p = {"wte": normal((V, C)), "wpe": normal((cfg.block_size, C))}
    for i in range(cfg.n_layer):
        p |= {
            f"h{i}.ln1.g": ones(C),
            f"h{i}.ln1.b": zeros(C),
            f"h{i}.qkv.W": normal((C, 3 * C)),
            f"h{i}.qkv.b": zeros(3 * C),
            f"h{i}.attn_proj.W": normal((C, C), resid),
            f"h{i}.attn_proj.b": zeros(C),
            f"h{i}.ln2.g": ones(C),
            f"h{i}.ln2.b": zeros(C),
            f"h{i}.fc.W": normal((C, 4 * C)),
            f"h{i}.fc.b": zeros(4 * C),
            f"h{i}.mlp_proj.W": normal((4 * C, C), resid),
            f"h{i}.mlp_proj.b": zeros(C),
        }
    p |= {"ln_f.g": ones(C), "ln_f.b": zeros(C)}
    return p | {"head.W": normal((C, V)), "head.b": zeros(V)}


# --8<-- [end:config]


# --8<-- [start:layers]
class Embedding:
    def __init__(self, wte, wpe):
        self.wte, self.wpe = to_device(wte), to_device(wpe)
        self.buf = Buffers()

    def forward(self, idx):  # (B, T) int32, checked on the host at upload
        self.idx = idx
        out = self.buf("x", (*idx.shape, self.wte.shape[1]))  # (B, T, C)
        return embedding(idx, self.wte, self.wpe, out=out, check_ids=False)

    def backward(self, dx):  # (B, T, C)
        rows = self.wte.shape[0] + self.wpe.shape[0]
        out = self.buf("d", (rows, dx.shape[2]))  # dwte over dwpe, one array
        self.grads = list(
            embedding_backward(
                dx, self.idx, self.wte, self.wpe, out=out, check_ids=False
            )
        )

    def params(self):
        return [self.wte, self.wpe]


class LayerNorm:
    def __init__(self, g, b):
        self.g, self.b = to_device(g), to_device(b)
        self.buf = Buffers()

    def forward(self, x):  # (N, C)
        N, C = x.shape
        self.x, self.mean, self.rstd = x, self.buf("mean", (N,)), self.buf("rstd", (N,))
        y = self.buf("y", (N, C))
        return layer_norm(x, self.g, self.b, out=y, mean=self.mean, rstd=self.rstd)

    def backward(self, dy):
        N, C = dy.shape
        out = self.buf("d", (N + 2, C))  # dx, dg, db packed
        dx, dg, db = layer_norm_backward(
            self.x, dy, self.g, self.mean, self.rstd, out=out
        )
        self.grads = [dg, db]
        return dx

    def params(self):
        return [self.g, self.b]


def thirds(a, shape):
    """q, k, v: the three (B, H, T, d) views of a (3, B, H, T, d) array."""
    n = a.size // 3
    flat = a.reshape(3 * n)
    return [flat[i * n : (i + 1) * n].reshape(shape) for i in range(3)]


class CausalSelfAttention:
    def __init__(self, p, i, n_head, linear=Dense):
        self.qkv = linear(p[f"h{i}.qkv.W"], p[f"h{i}.qkv.b"])  # C -> 3C
        self.proj = linear(p[f"h{i}.attn_proj.W"], p[f"h{i}.attn_proj.b"])  # C -> C
        self.H, self.buf = n_head, Buffers()

    def forward(self, x, B, T):  # (B * T, C)
        C, H = x.shape[1], self.H
        d = C // H
        self.shape = (B, H, T, d)
        qkv = self.qkv.forward(x).reshape(B, T, 3, H, d)  # (B * T, 3C), viewed
        heads = split_heads(qkv, out=self.buf("heads", (3, B, H, T, d)))
        self.q, self.k, self.v = thirds(heads, self.shape)  # (B, H, T, d) each
        self.lse = self.buf("lse", (B, H, T))
        self.o = attention(
            self.q, self.k, self.v, True, out=self.buf("o", self.shape), lse=self.lse
        )
        y = merge_heads(
            self.o.reshape(1, B, H, T, d), out=self.buf("y", (B, T, 1, H, d))
        )
        return self.proj.forward(y.reshape(B * T, C))

    def backward(self, dy):  # (B * T, C)
        B, H, T, d = self.shape
        dy = self.proj.backward(dy).reshape(B, T, 1, H, d)
        do = split_heads(dy, out=self.buf("do", (1, B, H, T, d))).reshape(self.shape)
        dheads = self.buf("dheads", (3, B, H, T, d))  # dq, dk, dv
        q, k, v, o = self.q, self.k, self.v, self.o
        attention_backward(q, k, v, o, do, self.lse, True, out=dheads)
        dqkv = merge_heads(dheads, out=self.buf("dqkv", (B, T, 3, H, d)))
        return self.qkv.backward(dqkv.reshape(B * T, 3 * H * d))

    def params(self):
        return self.qkv.params() + self.proj.params()

    @property
    def grads(self):
        return self.qkv.grads + self.proj.grads


class MLP:
    def __init__(self, p, i, linear=Dense):
        self.fc = linear(p[f"h{i}.fc.W"], p[f"h{i}.fc.b"])  # C -> 4C
        self.proj = linear(p[f"h{i}.mlp_proj.W"], p[f"h{i}.mlp_proj.b"])  # 4C -> C
        self.buf = Buffers()

    def forward(self, x):  # (N, C)
        self.a = self.fc.forward(x)  # (N, 4C), kept for gelu's backward
        n = self.a.size
        h = gelu(self.a.reshape(n), out=self.buf("h", (n,)))
        return self.proj.forward(h.reshape(self.a.shape))

    def backward(self, dy):
        dh = self.proj.backward(dy)  # (N, 4C)
        n = dh.size
        gelu_backward(dh.reshape(n), self.a.reshape(n), out=dh.reshape(n))  # in place
        return self.fc.backward(dh)

    def params(self):
        return self.fc.params() + self.proj.params()

    @property
    def grads(self):
        return self.fc.grads + self.proj.grads


class Block:
    def __init__(self, p, i, n_head, linear=Dense):
        self.ln1 = LayerNorm(p[f"h{i}.ln1.g"], p[f"h{i}.ln1.b"])
        self.attn = CausalSelfAttention(p, i, n_head, linear)
        self.ln2 = LayerNorm(p[f"h{i}.ln2.g"], p[f"h{i}.ln2.b"])
        self.mlp = MLP(p, i, linear)
        self.parts = [self.ln1, self.attn, self.ln2, self.mlp]  # the params' order
        self.buf = Buffers()

    def forward(self, x, B, T):  # (B * T, C)
        a = self.attn.forward(self.ln1.forward(x), B, T)
        x = matrix_add(x, a, out=self.buf("x1", x.shape))  # new: ln1 keeps the old x
        m = self.mlp.forward(self.ln2.forward(x))
        return matrix_add(x, m, out=self.buf("x2", x.shape))

    def backward(self, dx2):
        dx1 = self.ln2.backward(self.mlp.backward(dx2))
        matrix_add(dx1, dx2, out=dx1)  # the residual passes dx2 straight through
        dx = self.ln1.backward(self.attn.backward(dx1))
        return matrix_add(dx, dx1, out=dx)

    def params(self):
        return [p for part in self.parts for p in part.params()]

    @property
    def grads(self):
        return [g for part in self.parts for g in part.grads]


# --8<-- [end:layers]


# --8<-- [start:gpt]
class GPT:
    Linear = Dense  # the blocks' linear layers (gpt.py's GPT takes layers.Linear)

    def __init__(self, cfg: Config, p: dict[str, np.ndarray]):
        self.cfg = cfg
        self.names = list(p)  # init's order, the order of params() and grads
        self.emb = Embedding(p["wte"], p["wpe"])
        self.blocks = [Block(p, i, cfg.n_head, self.Linear) for i in range(cfg.n_layer)]
        self.ln_f = LayerNorm(p["ln_f.g"], p["ln_f.b"])
        self.head = self.make_head(p)  # C -> V
        self.layers = [self.emb, *self.blocks, self.ln_f, self.head]
        self.buf, self.ids = Buffers(), {}

    def make_head(self, p):
        return Dense(p["head.W"], p["head.b"])  # its own matrix (gpt.py ties it)

    def upload(self, name, a: np.ndarray):
        """A host batch into a device array kept for it; token ids checked here,
        once, so that no kernel copies them back to check them."""
        if a.dtype == np.int32:
            check_token_ids("transformer", a.reshape(1, -1), self.cfg.vocab)
        d = self.ids.get(name)
        if d is None or d.shape != a.shape or d.dtype != a.dtype:
            d = self.ids[name] = empty(a.shape, a.dtype)
        self.put(d, np.ascontiguousarray(a))
        return d

    @staticmethod
    def put(d, a):  # a host array into a device array (gpt.py queues the copy)
        d.set(a)

    def forward(self, idx, targets, weights):
        """idx, targets (B, T) int32, weights (B, T) float32 on the device, the
        weights summing to 1. Returns the loss, sum w * (-log p(target)), as a
        (1, 1) device array; keeps the logits (B * T, V)."""
        N = idx.size
        self.logits = self.run(idx)  # (N, V)
        self.targets, self.w = targets.reshape(N), weights.reshape(N)
        self.lse = self.buf("lse", (N,))
        rows = cross_entropy(
            self.logits, self.targets, out=self.buf("rows", (N,)), lse=self.lse
        )
        # the weighted sum as a (1, N) x (N, 1) product
        return matmul(
            rows.reshape(1, N), self.w.reshape(N, 1), out=self.buf("L", (1, 1))
        )

    def run(self, idx):
        """The logits (B * T, V) of idx (B, T), a device array; no loss."""
        B, T = idx.shape
        N, C = B * T, self.cfg.n_embd
        x = self.emb.forward(idx).reshape(N, C)
        for block in self.blocks:
            x = block.forward(x, B, T)
        return self.head.forward(self.ln_f.forward(x))

    def backward(self):
        """Every layer's grads for the last forward; the logits become dL/dlogits."""
        B, T = self.emb.idx.shape
        d = cross_entropy_backward(
            self.logits, self.targets, self.lse, self.w, out=self.logits
        )  # dL/drow r = w_r
        d = self.ln_f.backward(self.head.backward(d))
        for block in reversed(self.blocks):
            d = block.backward(d)
        self.emb.backward(d.reshape(B, T, self.cfg.n_embd))

    def params(self):
        return [p for layer in self.layers for p in layer.params()]

    def grads(self):
        return [g for layer in self.layers for g in layer.grads]


# --8<-- [end:gpt]


# --8<-- [start:adamw]
class AdamW:
    """torch.optim.AdamW over the model's parameters, one kernel launch each:
    weight decay on the matrices only (nanoGPT's groups), not on biases and layer
    norms. The moments live on the device; the hyper-parameters too (24 bytes
    written per group and step)."""

    def __init__(self, model, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1):
        self.model, self.betas, self.eps, self.wd = model, betas, eps, weight_decay
        self.m = [to_device(np.zeros(p.size, np.float32)) for p in model.params()]
        self.v = [to_device(np.zeros(p.size, np.float32)) for p in model.params()]
        self.hyper = {True: to_device(np.zeros(6, np.float32))}
        self.hyper[False] = to_device(np.zeros(6, np.float32))  # no decay
        self.t = 0
        self.put = GPT.put  # gpt.py's Trainer gives it an Uploader

    def step(self, lr: float):
        self.next_hyper(lr)
        self.update()

    def next_hyper(self, lr: float):
        """Count the step and upload its hyper-parameters (no kernel)."""
        self.t += 1
        for decay, hyper in self.hyper.items():
            wd = self.wd if decay else 0.0
            b1, b2 = self.betas
            self.put(hyper, hyper_parameters(lr, b1, b2, self.eps, wd, self.t))

    def update(self):
        """One adamw launch per parameter, the hyper-parameters uploaded."""
        params, grads = self.model.params(), self.model.grads()
        for p, g, m, v in zip(params, grads, self.m, self.v, strict=True):
            flat, n = p.reshape(p.size), p.size
            hyper = self.hyper[len(p.shape) == 2]
            adamw(flat, g.reshape(n), m, v, hyper, out=(flat, m, v))  # in place


# --8<-- [end:adamw]


# --8<-- [start:train]
class Trainer:
    """The kernels' model and its AdamW, behind the two calls `fit` makes (the
    twin has the same two)."""

    Model = GPT  # gpt.py's Trainer trains the tied GPT

    def __init__(self, cfg: Config, p: dict[str, np.ndarray], **adamw_settings):
        self.model = self.Model(cfg, p)
        self.opt = AdamW(self.model, **adamw_settings)

    def step(self, batch, lr: float):
        """Upload a host batch (idx, targets, weights), forward, backward, AdamW
        step. Returns the loss, a (1, 1) device array (read it only to log it)."""
        m, (idx, targets, weights) = self.model, batch
        w = weights / weights.sum(dtype=np.float64)  # a mean over scored positions
        loss = m.forward(
            m.upload("idx", idx),
            m.upload("targets", targets),
            m.upload("weights", w.astype(np.float32)),
        )
        m.backward()
        self.opt.step(lr)
        return loss

    def predict(self, idx: np.ndarray) -> np.ndarray:
        """The most likely next token at every position, (B, T), from one forward
        pass (the targets and weights are unused zeros)."""
        m, (B, T) = self.model, idx.shape
        zeros_i, zeros_w = np.zeros((B, T), np.int32), np.zeros((B, T), np.float32)
        m.forward(
            m.upload("idx_eval", idx),
            m.upload("targets_eval", zeros_i),
            m.upload("weights_eval", zeros_w),
        )
        return m.logits.get().reshape(B, T, -1).argmax(axis=2)

    def sync(self):
        synchronize()

    def read(self, loss) -> float:
        return float(loss.get()[0, 0])


# --8<-- [end:train]


def attention_maps(trainer, idx: np.ndarray) -> np.ndarray:
    """(n_layer, B, H, T, T): the attention weights each head gave on the
    sequences idx (B, T), rebuilt on the host from q, k and the lse the fused
    kernel kept (it never writes the weights): P = exp(q k^T / sqrt(d) - lse)
    below the diagonal, 0 above. For pictures, not for training."""
    trainer.predict(idx)
    maps = []
    for block in trainer.model.blocks:
        a = block.attn
        q, k, lse = (x.get().astype(np.float64) for x in (a.q, a.k, a.lse))
        s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])  # (B, H, T, T)
        causal = np.tril(np.ones(s.shape[-2:], bool))
        maps.append(np.where(causal, np.exp(s - lse[..., None]), 0.0))
    return np.array(maps)


def exact_match(trainer, test) -> float:
    """The share of held-out sequences (idx, targets, weights) whose every scored
    position is right. Where each answer token is right given the true tokens
    before it, greedy decoding writes the same answer, since each token it feeds
    back is then the true one: one forward pass measures what generation would."""
    idx, targets, weights = test
    wrong = (trainer.predict(idx) != targets) & (weights > 0)
    return float(np.mean(~wrong.any(axis=1)))


# --8<-- [start:fit]
def fit(trainer, batch_of, *, steps, lr, test=None, every=50, log=None):
    """`steps` steps on batch_of(i), the batch of step i. Every `every` steps and
    at the last, log(step, loss, held-out exact match on `test`). Returns the
    seconds spent in steps (the device synchronised; evaluation not counted)."""
    seconds, start = 0.0, time.perf_counter()
    for i in range(1, steps + 1):
        loss = trainer.step(batch_of(i), lr)
        if i % every == 0 or i == steps:
            trainer.sync()
            seconds += time.perf_counter() - start
            if log is not None:  # the loss first: evaluating writes over it
                value = trainer.read(loss)
                acc = None if test is None else exact_match(trainer, test)
                log(i, value, acc)
            start = time.perf_counter()
    return seconds


# --8<-- [end:fit]
