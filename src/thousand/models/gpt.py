"""A15 and A16: a GPT on the package's kernels, trained on the site's own posts.

transformer.py's decoder (A14) with GPT-2's tied output head: the logits are
x wte^T, so the token embedding is also the output layer, and wte's gradient is
the sum of what the embedding and the head send back. The text is the posts'
snapshot (corpus.py), tokenised by the package's byte-level BPE (bpe.py); the
model generates with a KV cache (the kernels kv_append and attention_decode),
sampling with temperature, top-k and top-p on the host. Pre-training, the
fine-tuned classifier of A15 and the model sizes of A16 are here too. The
PyTorch twin is gpt_twin.py.
"""

from __future__ import annotations

import functools
import time

import numpy as np

from thousand.cuda import (
    Replay,
    Uploader,
    device_address,
    empty,
    on_cpu,
    synchronize,
)
from thousand.kernels.attention_decode import attention_decode
from thousand.kernels.embedding import embedding
from thousand.kernels.kv_append import kv_append
from thousand.kernels.matmul import matmul
from thousand.kernels.matmul_tn import matmul_tn
from thousand.kernels.matrix_add import matrix_add
from thousand.kernels.split_heads import split_heads
from thousand.kernels.transpose import transpose
from thousand.models import bpe, corpus
from thousand.models import transformer as TF
from thousand.models.layers import Buffers, Dense
from thousand.models.transformer import Config

# The kernel families a training step runs, and the files besides them that a
# recorded result depends on (relative to src/thousand): an experiment built on
# this model names both, so that changing any of them makes its result stale.
FAMILIES = (
    "embedding",
    "embedding_backward",
    "layer_norm",
    "layer_norm_backward",
    "matmul",
    "matmul_tn",
    "bias_add",
    "transpose",
    "split_heads",
    "merge_heads",
    "attention",
    "attention_backward",
    "matrix_add",
    "gelu",
    "gelu_backward",
    "cross_entropy",
    "cross_entropy_backward",
    "adamw",
)
FILES = (
    "models/gpt.py",
    "models/transformer.py",
    "models/layers.py",
    "models/bpe.py",
    "models/corpus.py",
    "models/snapshot/posts.json",
    "models/snapshot/bpe.txt",
)

# --8<-- [start:sizes]
VOCAB = 4096  # the shipped BPE's vocabulary (bpe.txt)
CONTEXT = 128  # tokens a sequence holds: rows of wpe

# A16's four sizes; "small" is also A15's model. d = n_embd / n_head is 32 or 64.
SIZES = {
    "tiny": Config(VOCAB, CONTEXT, n_layer=2, n_head=2, n_embd=64),
    "small": Config(VOCAB, CONTEXT, n_layer=4, n_head=4, n_embd=128),
    "medium": Config(VOCAB, CONTEXT, n_layer=4, n_head=4, n_embd=256),
    "large": Config(VOCAB, CONTEXT, n_layer=6, n_head=6, n_embd=384),
}
# A configuration for the CPU backend: the same code, a few steps in seconds
QUICK = Config(VOCAB, 16, n_layer=1, n_head=2, n_embd=32)


def init(cfg: Config, seed: int) -> dict[str, np.ndarray]:
    """transformer.init's weights without the head: wte is the output layer."""
    p = TF.init(cfg, seed)
    del p["head.W"], p["head.b"]
    return p


def n_params(cfg: Config, embeddings: bool = False) -> int:
    """Parameters; without the embeddings (wte and wpe) by default, as Kaplan et
    al. (2020) count a model's size for scaling laws."""
    C = cfg.n_embd
    per_block = 12 * C * C + 13 * C  # qkv, proj, fc, proj weights and biases; 2 LNs
    n = cfg.n_layer * per_block + 2 * C  # and ln_f
    return n + (cfg.vocab + cfg.block_size) * C if embeddings else n


# --8<-- [end:sizes]


# --8<-- [start:linear]
class Linear(Dense):
    """Y = X W + b for a batch of many rows (a Transformer's tokens): its backward
    reads X^T B products straight from X with matmul_tn, which splits the sum over
    the rows across the GPU and adds up db in the same pass, instead of a transpose
    of X and a product with too few blocks to fill the GPU."""

    def __init__(self, W: np.ndarray, b: np.ndarray):
        super().__init__(W, b, "linear")

    def backward(self, G, need_dX: bool = True):
        (M, n_out), n_in = G.shape, self.W.shape[0]
        db = self.buf("db", (n_out,))
        dW = matmul_tn(self.X, G, out=self.buf("dW", (n_in, n_out)), db=db)
        self.grads = [dW, db]
        if not need_dX:
            return None
        WT = transpose(self.W, out=self.buf("WT", (n_out, n_in)))
        return matmul(G, WT, out=self.buf("dX", (M, n_in)))  # dY W^T


# --8<-- [end:linear]


# --8<-- [start:tied]
class TiedHead:
    """logits = x wte^T, wte being the embedding's own device array. Its gradient
    dL/dwte = G^T x is left in `dwte` for GPT.backward to add to the embedding's;
    the head owns no parameter of its own."""

    grads: list = []

    def __init__(self, emb: TF.Embedding):
        self.emb, self.buf = emb, Buffers()

    def params(self):
        return []

    def forward(self, x):  # (N, C)
        V, C = self.emb.wte.shape
        wT = transpose(self.emb.wte, out=self.buf("wT", (C, V)))
        self.x = x
        return matmul(x, wT, out=self.buf("Y", (x.shape[0], V)))  # (N, V)

    def backward(self, G):  # G = dL/dlogits (N, V)
        (N, V), C = G.shape, self.x.shape[1]
        self.dwte = matmul_tn(G, self.x, out=self.buf("dwte", (V, C)))  # G^T x
        return matmul(G, self.emb.wte, out=self.buf("dx", (N, C)))  # G wte


class GPT(TF.GPT):
    Linear = Linear  # weight gradients by matmul_tn

    def make_head(self, p):
        return TiedHead(self.emb)

    def backward(self):
        super().backward()
        dwte = self.emb.grads[0]  # what the embedding sent back, then the head's
        matrix_add(dwte, self.head.dwte, out=dwte)


class Trainer(TF.Trainer):
    """transformer.Trainer for the tied GPT, with two things that keep the GPU
    busy: the batch and AdamW's hyper-parameters are queued behind the kernels
    (Uploader), and a step's launches (forward, backward, AdamW), recorded on
    the first step, are replayed on the next (Replay): the same kernels on the
    same arrays without each launcher's checks in Python, which for a few
    hundred launches a step cost more host time than the GPU spends. A batch of
    another shape records anew. replay = False makes every step go through the
    launchers."""

    Model = GPT
    replay = True

    def __init__(self, cfg: Config, p: dict[str, np.ndarray], **adamw_settings):
        super().__init__(cfg, p, **adamw_settings)
        self.model.put = self.opt.put = Uploader()
        self._recorded = None  # (the key it was recorded for, Replay, its loss)

    def step(self, batch, lr: float):
        m, (idx, targets, weights) = self.model, batch
        w = (weights / weights.sum(dtype=np.float64)).astype(np.float32)
        names = ("idx", "targets", "weights")
        up = [m.upload(n, a) for n, a in zip(names, (idx, targets, w), strict=True)]
        self.opt.next_hyper(lr)  # uploads, no kernel: done on every step
        key = tuple(device_address(a) for a in up)  # same shapes, same arrays
        if self.replay and self._recorded is not None and self._recorded[0] == key:
            self._recorded[1]()
            return self._recorded[2]
        with Replay() as launches:
            loss = m.forward(*up)
            m.backward()
            self.opt.update()
        self._recorded = (key, launches, loss)
        return loss

    def loss(self, batch) -> float:
        """The loss of a host batch (idx, targets, weights), forward only."""
        m, (idx, targets, weights) = self.model, batch
        w = (weights / weights.sum(dtype=np.float64)).astype(np.float32)
        names = ("idx_eval", "targets_eval", "weights_eval")
        arrays = (idx, targets, w)
        up = [m.upload(n, a) for n, a in zip(names, arrays, strict=True)]
        return self.read(m.forward(*up))

    def host_params(self) -> dict[str, np.ndarray]:
        values = [p.get() for p in self.model.params()]
        return dict(zip(self.model.names, values, strict=True))


# --8<-- [end:tied]


# --8<-- [start:data]
@functools.cache
def tokens(split: str) -> np.ndarray:
    """The corpus split as one stream of token ids (int32), paragraphs separated
    by <|endoftext|>. Encoding takes seconds in pure Python: done once a process."""
    return np.array(bpe.Tokenizer.load().encode(corpus.text(split)), np.int32)


def lm_batch(stream: np.ndarray, rng, B: int, T: int):
    """B windows of T + 1 tokens at random offsets: the inputs, the same shifted
    by one as the targets, every position weighted alike."""
    starts = rng.integers(0, len(stream) - T, B)
    rows = np.stack([stream[s : s + T + 1] for s in starts])
    return rows[:, :-1].copy(), rows[:, 1:].copy(), np.ones((B, T), np.float32)


def val_batches(stream: np.ndarray, B: int, T: int, limit: int | None = None):
    """The stream cut into back-to-back windows, B a batch (the partial batch at
    the end dropped, so every batch weighs the same in the mean)."""
    n = (len(stream) - 1) // T
    rows = np.stack([stream[i * T : i * T + T + 1] for i in range(n)])
    out = []
    for i in range(0, n - B + 1, B):
        out.append(
            (rows[i : i + B, :-1], rows[i : i + B, 1:], np.ones((B, T), np.float32))
        )
    return out[:limit]


def val_loss(trainer, batches) -> float:
    return float(np.mean([trainer.loss(b) for b in batches]))


# --8<-- [end:data]


# --8<-- [start:pretrain]
def lr_at(step: int, steps: int, peak: float, warmup: int) -> float:
    """Linear warm-up to `peak`, then a cosine down to a tenth of it (nanoGPT's)."""
    if step <= warmup:
        return peak * step / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return peak * (0.1 + 0.45 * (1 + np.cos(np.pi * progress)))


def pretrain(
    trainer, *, steps, batch, lr, seed=0, every=100, val=None, warmup=None, log=None
):
    """`steps` AdamW steps on random windows of the train split. Every `every`
    steps and at the last: the training loss, and the loss on `val` (batches from
    val_batches). Returns the curve and the seconds spent in steps 2 to `steps`:
    the first compiles the kernels a process has not used yet and records the
    launches, and would be counted for whichever model trains first."""
    T = trainer.model.cfg.block_size
    stream, rng = tokens("train"), np.random.default_rng(seed)
    warmup = warmup if warmup is not None else max(1, steps // 20)
    curve = {"step": [], "loss": [], "val": []}
    seconds, start = 0.0, time.perf_counter()
    for i in range(1, steps + 1):
        step_lr = lr_at(i, steps, lr, warmup)
        loss = trainer.step(lm_batch(stream, rng, batch, T), step_lr)
        if i == 1:  # the clock starts after the first step
            trainer.sync()
            start = time.perf_counter()
        if i % every == 0 or i == steps:
            trainer.sync()
            seconds += time.perf_counter() - start
            curve["step"].append(i)
            curve["loss"].append(trainer.read(loss))
            curve["val"].append(None if val is None else val_loss(trainer, val))
            if log is not None:
                log(i, curve["loss"][-1], curve["val"][-1])
            start = time.perf_counter()
    return curve, seconds


# A16's runs: every size sees the same tokens (steps x batch x CONTEXT). Smaller
# learning rates for larger models, as GPT-3's Table 2.1 sets them.
PRETRAIN = {"steps": 600, "batch": 64, "every": 50, "seed": 0}
LR = {"tiny": 2e-3, "small": 1.5e-3, "medium": 1e-3, "large": 6e-4}
QUICK_PRETRAIN = {"steps": 4, "batch": 2, "every": 2, "seed": 0}


@functools.cache
def pretrained(size: str, quick: bool = False) -> dict:
    """One pre-training run of SIZES[size] (QUICK on the CPU backend's quick
    runs), made once a process and shared by the experiments that need it: the
    weights, the curve, the seconds and what it cost."""
    s = QUICK_PRETRAIN if quick else PRETRAIN
    cfg = QUICK if quick else SIZES[size]
    trainer = Trainer(cfg, init(cfg, s["seed"]))
    val = val_batches(tokens("val"), s["batch"], cfg.block_size, 1 if quick else None)
    curve, seconds = pretrain(
        trainer,
        steps=s["steps"],
        batch=s["batch"],
        lr=LR[size],
        every=s["every"],
        seed=s["seed"],
        val=val,
    )
    seen = s["steps"] * s["batch"] * cfg.block_size  # tokens trained on
    return {
        "cfg": cfg,
        "params": trainer.host_params(),
        "curve": curve,
        "seconds": seconds,
        "tokens": seen,
        "flops": 6 * n_params(cfg) * seen,  # Kaplan et al.'s C = 6 N D
    }


# --8<-- [end:pretrain]


# --8<-- [start:classify]
def track_task(split: str, T: int, limit: int | None = None, seed: int = 0):
    """A15's labelled task: which track, A or B, a paragraph comes from. Each
    sequence is the paragraph's first T - 1 tokens, then <|classify|>; the target
    at that position is the token "A" or "B", and only it is scored (weight 1).
    The rest is padded with <|endoftext|>, which the causal mask keeps out of
    sight. `limit` paragraphs, drawn at random (seeded) when given."""
    tok = bpe.Tokenizer.load()
    every = corpus.load()["paragraphs"]  # with their post, language and track
    rows = [every[i] for i in corpus.split(split)]
    if limit is not None:
        pick = np.random.default_rng(seed).permutation(len(rows))[:limit]
        rows = [rows[i] for i in sorted(pick)]
    eot, cls = tok.id_of("<|endoftext|>"), tok.id_of("<|classify|>")
    idx = np.full((len(rows), T), eot, np.int32)
    targets = np.full((len(rows), T), eot, np.int32)
    weights = np.zeros((len(rows), T), np.float32)
    at = np.empty(len(rows), np.int64)  # where each <|classify|> sits
    for r, row in enumerate(rows):
        ids = tok.encode(row["text"])[: T - 1] + [cls]
        idx[r, : len(ids)] = ids
        at[r] = len(ids) - 1
        targets[r, at[r]], weights[r, at[r]] = tok.id_of(row["track"]), 1.0
    return idx, targets, weights, at


def track_accuracy(trainer, task, batch: int = 64) -> float:
    """The share of paragraphs whose logit for their track's letter beats the
    other letter's at the <|classify|> position."""
    idx, targets, _, at = task
    tok, right = bpe.Tokenizer.load(), 0
    letters = [tok.id_of("A"), tok.id_of("B")]
    m = trainer.model
    for s in range(0, len(idx), batch):
        part = idx[s : s + batch]
        logits = m.run(m.upload("idx_eval", part)).get()
        logits = logits.reshape(*part.shape, -1)
        rows = np.arange(len(part))
        two = logits[rows, at[s : s + batch]][:, letters]  # (b, 2)
        guess = np.array(letters)[two.argmax(axis=1)]
        right += int(np.sum(guess == targets[s : s + batch][rows, at[s : s + batch]]))
    return right / len(idx)


FINETUNE = {"labels": 256, "steps": 150, "batch": 32, "every": 15, "lrs": (1e-4, 1e-3)}
QUICK_FINETUNE = {"labels": 8, "steps": 2, "batch": 4, "every": 1, "lrs": (1e-3,)}


def finetune(trainer, task, held_out, *, steps, batch, lr, every, seed=0):
    """AdamW on random batches of the labelled `task`, a warm-up of a tenth then
    the cosine; the held-out accuracy every `every` steps and at the last."""
    rng = np.random.default_rng(seed)
    idx, targets, weights, _ = task
    curve = {"step": [0], "accuracy": [track_accuracy(trainer, held_out)]}
    for i in range(1, steps + 1):
        rows = rng.integers(0, len(idx), batch)
        trainer.step(
            (idx[rows], targets[rows], weights[rows]),
            lr_at(i, steps, lr, max(1, steps // 10)),
        )
        if i % every == 0 or i == steps:
            curve["step"].append(i)
            curve["accuracy"].append(track_accuracy(trainer, held_out))
    return curve


# --8<-- [end:classify]


# --8<-- [start:sample]
def sample(logits: np.ndarray, rng, temperature=1.0, top_k=None, top_p=None):
    """One token per row of logits (B, V). temperature 0 is greedy; top_k keeps
    the k likeliest tokens, top_p the fewest whose probabilities reach p (the
    nucleus); what is left is renormalised and drawn from."""
    z = logits.astype(np.float64)
    if temperature == 0:
        return z.argmax(axis=1)
    z = z / temperature
    if top_k is not None:
        kth = np.sort(z, axis=1)[:, -top_k][:, None]
        z = np.where(z < kth, -np.inf, z)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    if top_p is not None:
        order = np.argsort(-p, axis=1)
        sorted_p = np.take_along_axis(p, order, axis=1)
        before = np.cumsum(sorted_p, axis=1) - sorted_p  # mass of likelier tokens
        drop = np.zeros_like(p, bool)
        np.put_along_axis(drop, order, before >= top_p, axis=1)  # never the first
        p = np.where(drop, 0.0, p)
        p /= p.sum(axis=1, keepdims=True)
    u = rng.random((len(p), 1))
    return np.minimum((np.cumsum(p, axis=1) < u).sum(axis=1), p.shape[1] - 1)


# --8<-- [end:sample]


# --8<-- [start:cache]
class KVCache:
    """Every block's keys and values so far, (B, H, block_size, d) each on the
    device: a decoding step computes q, k and v for the new token only, appends
    k and v, and attends over the cache."""

    def __init__(self, model: GPT, B: int):
        cfg = model.cfg
        shape = (B, cfg.n_head, cfg.block_size, cfg.n_embd // cfg.n_head)
        self.k = [empty(shape, np.float32) for _ in model.blocks]
        self.v = [empty(shape, np.float32) for _ in model.blocks]
        self.length, self.buf = 0, Buffers()

    def fill(self, model: GPT):
        """After model.run on a prompt: its keys and values into the cache."""
        for i, block in enumerate(model.blocks):
            kv_append(self.k[i], block.attn.k, 0, out=self.k[i])
            kv_append(self.v[i], block.attn.v, 0, out=self.v[i])
        self.length = model.blocks[0].attn.k.shape[2]

    def attend(self, i: int, attn: TF.CausalSelfAttention, x):
        """Block i's attention for one new token per sequence: x (B, C)."""
        (B, C), H, pos = x.shape, attn.H, self.length
        d = C // H
        qkv = attn.qkv.forward(x).reshape(B, 1, 3, H, d)
        heads = split_heads(qkv, out=self.buf("heads", (3, B, H, 1, d)))
        q, k, v = TF.thirds(heads, (B, H, 1, d))
        kv_append(self.k[i], k, pos, out=self.k[i])
        kv_append(self.v[i], v, pos, out=self.v[i])
        o = attention_decode(
            q, self.k[i], self.v[i], pos + 1, out=self.buf("o", (B, H, 1, d))
        )
        return attn.proj.forward(o.reshape(B, C))  # (B, H, 1, d) is (B, 1, H, d)

    def step(self, model: GPT, tokens: np.ndarray) -> np.ndarray:
        """The next token's logits (B, V) after one new token per sequence."""
        B, pos, buf = len(tokens), self.length, self.buf
        if pos >= model.cfg.block_size:
            raise ValueError(
                f"generate: the cache holds {model.cfg.block_size} tokens, full"
            )
        idx = model.upload("step", tokens.astype(np.int32).reshape(B, 1))
        C = model.cfg.n_embd
        wpe = model.emb.wpe.reshape(model.emb.wpe.size)[pos * C : (pos + 1) * C]
        x = embedding(idx, model.emb.wte, wpe.reshape(1, C), out=buf("x", (B, 1, C)))
        x = x.reshape(B, C)
        for i, block in enumerate(model.blocks):
            a = self.attend(i, block.attn, block.ln1.forward(x))
            x = matrix_add(x, a, out=buf(f"x1.{i}", (B, C)))
            m = block.mlp.forward(block.ln2.forward(x))
            x = matrix_add(x, m, out=buf(f"x2.{i}", (B, C)))
        self.length += 1
        return model.head.forward(model.ln_f.forward(x)).get()


def generate(model: GPT, prompt, n_new: int, seed=0, stop=None, **sampling):
    """Continue each prompt (a list of token-id lists of one length) by n_new
    tokens, sampled as `sample` does with **sampling; a sequence that draws the
    token `stop` ends there. Returns the new tokens of each prompt."""
    prompt = np.asarray(prompt, np.int32)
    B, T0 = prompt.shape
    if T0 < 1 or T0 + n_new > model.cfg.block_size:
        raise ValueError(
            f"generate: prompt ({T0} tokens) + n_new ({n_new}) must fit the "
            f"model's {model.cfg.block_size} positions, with at least one prompt token"
        )
    cache, rng = KVCache(model, B), np.random.default_rng(seed)
    logits = model.run(model.upload("prompt", prompt)).get().reshape(B, T0, -1)
    logits = logits[:, -1]  # the prompt's last position predicts the first token
    cache.fill(model)
    out, done = [[] for _ in range(B)], np.zeros(B, bool)
    for _ in range(n_new):
        nxt = sample(logits, rng, **sampling)
        for b in range(B):
            if not done[b]:
                out[b].append(int(nxt[b]))
                done[b] = nxt[b] == stop
        if done.all():
            break
        logits = cache.step(model, nxt)
    return out


# --8<-- [end:cache]


def time_steps(trainer, batch, steps: int) -> float:
    """Seconds per training step on one batch, after two steps of warm-up (the
    first compiles and allocates), the device synchronised."""
    for _ in range(2):
        trainer.step(batch, 1e-4)
    trainer.sync()
    start = time.perf_counter()
    for _ in range(steps):
        trainer.step(batch, 1e-4)
    trainer.sync()
    return (time.perf_counter() - start) / steps


def device_bytes_in_use() -> int:
    """Bytes of device memory in use, the whole device (0 on the CPU backend)."""
    if on_cpu():
        return 0
    from thousand.cuda import driver

    free, total = driver().mem_get_info()
    synchronize()
    return total - free
