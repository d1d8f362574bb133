"""B16: torch.compile on two of the site's models, and the same training steps on
the package's kernels.

    MLP        A4's network, 64 -> 128 ReLU -> 10, a batch of 32, SGD at lr 0.1,
               its weights from mlp.init: kernels so small that launching
               them weighs as much as what they compute
    BlockLoss  one block of A14's Transformer (transformer_twin.Block, the twin
               the Transformer post checks against) at A16's "large" width,
               C = 384, 6 heads, T = 128, 64 sequences: the block whose model A16
               timed against PyTorch eager, with matmuls large enough that what
               happens between them (fused or not) decides the rest

train_step(model, opt, mode) is one training step: zero the gradients, forward
(the loss is part of the module), backward, the optimizer's step. mode None runs
it eagerly; otherwise the module runs through torch.compile(model, mode=mode):
Dynamo captures the forward as a graph, AOTAutograd derives the backward graph,
Inductor writes kernels for both (the forward on the first call, the backward on
the first backward). The optimizer's step stays eager in every mode (PyTorch's
foreach kernels), as nanoGPT runs it.

explain(fn, *args) says where Dynamo's graphs break; generated(fn, *args) runs fn
and returns the code Inductor wrote while it ran: Triton on a GPU, C++ on the CPU.
mlp_kernels and KernelBlock are the same two steps on the package's kernels.
"""

from __future__ import annotations

import dataclasses
import re
import time
from pathlib import Path

import numpy as np

from thousand.beyond import interpreted
from thousand.cuda import Replay, Uploader, is_device_array, on_cpu, to_device
from thousand.models import gpt, layers, mlp
from thousand.models import transformer as TF
from thousand.models.transformer import Config
from thousand.optional import require

torch = require("torch", "B16's torch.compile")
F, nn = torch.nn.functional, torch.nn
from thousand.models import transformer_twin  # noqa: E402  (needs torch)

MLP_SIZES, MLP_HIDDEN = mlp.DIGITS_SIZES, mlp.DIGITS_HIDDEN  # [64, 128, 10], relu
MLP_BATCH, MLP_LR = mlp.DIGITS_SETTINGS["batch"], mlp.DIGITS_SETTINGS["lr"]
# A16's "large" width and context; one block of it, initialised as a model of one
BLOCK = dataclasses.replace(gpt.SIZES["large"], n_layer=1)
BLOCK_BATCH, BLOCK_LR = gpt.PRETRAIN["batch"], gpt.LR["large"]
# For the CPU: the same code on a block small enough to run in a test
QUICK_BLOCK, QUICK_BATCH = (
    Config(vocab=11, block_size=8, n_layer=1, n_head=2, n_embd=32),
    2,
)
# torch.compile's modes that B16 runs (None: eager)
MODES = ("default", "reduce-overhead", "max-autotune-no-cudagraphs")
ADAMW = {"betas": (0.9, 0.95), "eps": 1e-8, "weight_decay": 0.1}  # transformer.AdamW's


def device() -> str:
    """Where the PyTorch ways run: the GPU when PyTorch sees one and the package's
    kernels run there too, else the CPU (Inductor then writes C++)."""
    return "cuda" if torch.cuda.is_available() and not on_cpu() else "cpu"


# --8<-- [start:models]
class MLP(nn.Module):
    """A4's network; the forward returns the mean softmax cross-entropy."""

    def __init__(self, params):  # mlp.init's [(W (in, out), b), ...]
        super().__init__()
        (W1, b1), (W2, b2) = params
        self.fc1, self.fc2 = nn.Linear(*W1.shape), nn.Linear(*W2.shape)
        with torch.no_grad():
            for fc, W, b in ((self.fc1, W1, b1), (self.fc2, W2, b2)):
                fc.weight.copy_(torch.from_numpy(W.T.copy()))  # nn.Linear: (out, in)
                fc.bias.copy_(torch.from_numpy(b))

    def forward(self, x, labels):  # (M, 64) float32, (M,) int64
        return F.cross_entropy(self.fc2(F.relu(self.fc1(x))), labels)

    def check(self, x, labels):
        M = _tensor("MLP", "x", x, torch.float32, (None, self.fc1.in_features))
        _tensor("MLP", "labels", labels, torch.int64, (M[0],))


class BlockLoss(nn.Module):
    """A Transformer block and L = sum(block(x) * G): G is a fixed array, so the
    backward starts from dL/dy = G, as it would with more of the model above."""

    def __init__(self, cfg: Config, p: dict):  # transformer.init's weights
        super().__init__()
        # the twin loads p by name into a one-block GPT; keep its block
        self.block = transformer_twin.Trainer(cfg, p).model.h[0]
        self.C = cfg.n_embd

    def forward(self, x, G):  # (B, T, C) each
        return (self.block(x) * G).sum()

    def check(self, x, G):
        shape = _tensor("BlockLoss", "x", x, torch.float32, (None, None, self.C))
        _tensor("BlockLoss", "G", G, torch.float32, shape)


# --8<-- [end:models]


def _tensor(who, name, t, dtype, shape) -> tuple:
    """Check a batch tensor (shape: None where any size goes); its shape."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(
            f"{who}: `{name}` must be a torch.Tensor, got {type(t).__name__}"
        )
    if t.dtype != dtype:
        raise ValueError(f"{who}: `{name}` must be {dtype}, got {t.dtype}")
    if t.dim() != len(shape) or any(
        want is not None and got != want
        for got, want in zip(t.shape, shape, strict=True)
    ):
        want = tuple("any" if s is None else s for s in shape)
        raise ValueError(
            f"{who}: `{name}` must have shape {want}, got {tuple(t.shape)}"
        )
    return tuple(t.shape)


def _on(model, batch) -> None:
    """Every batch tensor on the model's device (a mix would fail deep in a kernel)."""
    where = next(model.parameters()).device
    for t in batch:
        if t.device != where:
            raise ValueError(
                f"{type(model).__name__}: the batch is on {t.device}, the model on "
                f"{where}; move it with .to({str(where)!r})"
            )


# --8<-- [start:step]
def train_step(model, opt, mode: str | None = None):
    """A training step of `model` (MLP or BlockLoss: its forward returns the
    loss) and `opt`, eager (mode None) or with the module through
    torch.compile(model, mode=mode). Returns step(*batch) -> the loss, detached."""
    if not callable(getattr(model, "check", None)):
        raise TypeError(
            f"train_step: model must be MLP or BlockLoss, got {type(model).__name__}"
        )
    if mode is not None and mode not in MODES:
        raise ValueError(f"train_step: mode must be None (eager) or one of {MODES}")
    forward = model if mode is None else torch.compile(model, mode=mode)
    graphs = mode == "reduce-overhead"  # CUDA graphs, replayed from the third call

    def step(*batch):
        model.check(*batch)
        _on(model, batch)
        if mode is not None and batch[0].is_cuda and interpreted():
            raise RuntimeError(
                "TRITON_INTERPRET=1 is set: Inductor's Triton kernels would run in "
                "Triton's interpreter; unset it to compile for the GPU"
            )
        if graphs:  # a new step: the graphs' outputs of the last one may be reused
            torch.compiler.cudagraph_mark_step_begin()
        opt.zero_grad(set_to_none=True)
        loss = forward(*batch)
        loss.backward()
        opt.step()
        # a graph's output lives in its memory pool, rewritten by the next replay
        return loss.detach().clone() if graphs else loss.detach()

    return step


# --8<-- [end:step]


def mlp_problem(seed: int = 0, batch: int = MLP_BATCH):
    """A4's weights (mlp.init) and a batch of its shape: pixels in [0, 1), labels
    0-9, drawn from `seed` (timing does not need real digits)."""
    rng = np.random.default_rng(seed)
    x = rng.random((batch, MLP_SIZES[0]), dtype=np.float32)
    labels = rng.integers(0, MLP_SIZES[-1], batch)
    return mlp.init(MLP_SIZES, seed), (x, labels)


def mlp_torch(where: str, seed: int = 0, batch: int = MLP_BATCH):
    """The MLP, SGD (lr 0.1) and the batch as tensors on `where`."""
    params, (x, labels) = mlp_problem(seed, batch)
    model = MLP(params).to(where)
    opt = torch.optim.SGD(model.parameters(), lr=MLP_LR)
    tensors = (torch.from_numpy(x).to(where), torch.from_numpy(labels).to(where))
    return model, opt, tensors


def block_problem(cfg: Config = BLOCK, B: int = BLOCK_BATCH, seed: int = 0):
    """transformer.init's weights for one block, x and G (B, T, C) ~ N(0, 1)."""
    rng = np.random.default_rng(seed)
    shape = (B, cfg.block_size, cfg.n_embd)
    x, G = (rng.standard_normal(shape, dtype=np.float32) for _ in range(2))
    return TF.init(cfg, seed), (x, G)


def block_torch(where: str, cfg: Config = BLOCK, B: int = BLOCK_BATCH, seed=0):
    """The block, AdamW (nanoGPT's groups: decay on the matrices only) and x, G
    as tensors on `where`."""
    p, batch = block_problem(cfg, B, seed)
    model = BlockLoss(cfg, p).to(where)
    ps = list(model.parameters())
    groups = [
        {"params": [t for t in ps if t.dim() == 2]},
        {"params": [t for t in ps if t.dim() < 2], "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(groups, lr=BLOCK_LR, **ADAMW)
    return model, opt, tuple(torch.from_numpy(a).to(where) for a in batch)


# --8<-- [start:kernels]
class Resident(layers.Network):
    """A4's layers.Network, given a batch already on the device: upload passes a
    device array through instead of copying a host one."""

    def upload(self, name, a):
        return a if is_device_array(a) else super().upload(name, a)


def mlp_kernels(seed: int = 0, batch: int = MLP_BATCH):
    """The MLP's step on the package's kernels: layers.Network.train_step as A4
    trains it (forward, softmax cross-entropy, backward, then one sgd launch per
    parameter, the learning rate uploaded first) on a batch kept on the device.
    Returns (the network, step() -> per-row losses on the device)."""
    params, (x, labels) = mlp_problem(seed, batch)
    acts = mlp.activations(MLP_SIZES, MLP_HIDDEN)
    net = Resident(layers.dense_layers(params, acts))
    X, T = to_device(x), to_device(mlp.one_hot(labels, MLP_SIZES[-1]))
    return net, lambda: net.train_step(X, T, MLP_LR)


class KernelBlock:
    """The block's step on the package's kernels: transformer.Block with A16's
    Linear (weight gradients by matmul_tn) forward on x, backward from G (its
    dx too), then transformer.AdamW's launch per parameter. As A16's Trainer
    does, the first step's launches are recorded and the next steps replay them
    without the launchers' Python checks; only the hyper-parameters (the step
    count) are uploaded anew, queued behind the kernels."""

    def __init__(self, cfg: Config = BLOCK, B: int = BLOCK_BATCH, seed: int = 0):
        p, (x, G) = block_problem(cfg, B, seed)
        self.block = TF.Block(p, 0, cfg.n_head, gpt.Linear)
        self.opt = TF.AdamW(self, **ADAMW)  # reads params() and grads() below
        self.opt.put = Uploader()
        N = B * cfg.block_size
        self.x = to_device(x.reshape(N, cfg.n_embd))  # (B * T, C)
        self.G = to_device(G.reshape(N, cfg.n_embd))
        self.B, self.T, self.replay = B, cfg.block_size, None

    def params(self):
        return self.block.params()

    def grads(self):
        return self.block.grads

    def __call__(self):
        self.opt.next_hyper(BLOCK_LR)
        if self.replay is not None:
            return self.replay()
        with Replay() as launches:
            self.block.forward(self.x, self.B, self.T)
            self.block.backward(self.G)
            self.opt.update()
        self.replay = launches


# --8<-- [end:kernels]


# --8<-- [start:explain]
@dataclasses.dataclass
class Explained:
    graphs: int  # graphs Dynamo captured
    breaks: int  # graph breaks between them
    reasons: list[str]  # the first line of each break's reason
    where: list[str]  # the line of user code each break happened at


def explain(fn, *args) -> Explained:
    """Run fn(*args) under torch._dynamo.explain (no Inductor: Dynamo's graphs
    run as they are) and say how many graphs it made and why it broke."""
    if not callable(fn):
        raise TypeError(f"explain: fn must be callable, got {type(fn).__name__}")
    out = torch._dynamo.explain(fn)(*args)
    reasons, where = [], []
    for r in out.break_reasons:
        reasons.append(r.reason.strip().splitlines()[0])
        frame = r.user_stack[-1] if r.user_stack else None
        where.append(
            f"{Path(frame.filename).name}:{frame.lineno}: {_code(frame.line)}"
            if frame is not None
            else "?"
        )
    return Explained(out.graph_count, out.graph_break_count, reasons, where)


def _code(line: str) -> str:
    return line.split("  #")[0].strip()  # the line without its comment


# --8<-- [end:explain]


# --8<-- [start:generated]
KERNEL = re.compile(
    r"^(\w+) = async_compile\.(\w+)\(.*?'''\n?(.*?)'''", re.MULTILINE | re.DOTALL
)
# a call of a library's kernel: cuBLAS's matmuls, PyTorch's attention
LIBRARY = re.compile(r"\b(?:extern_kernels|torch\.ops\.aten)\.(\w+)(?:\.default)?\(")


@dataclasses.dataclass
class Generated:
    result: object  # what fn returned
    sources: list[str]  # Inductor's output code: a module per graph, in order
    kernels: list[dict[str, str]]  # per module: kernel name -> its source
    library: list[list[str]]  # per module: its library calls (cuBLAS's mm)

    @property
    def language(self) -> str:
        every = [k for module in self.kernels for k in module.values()]
        if not every:
            return "none"
        return "Triton" if all("@triton.jit" in k for k in every) else "C++"

    def find(self, word: str) -> tuple[str, str]:
        """The first kernel whose name has `word` in it: (name, source)."""
        for module in self.kernels:
            for name, source in module.items():
                if word in name:
                    return name, source
        names = [n for module in self.kernels for n in module]
        raise KeyError(f"no kernel named with {word!r} among {names}")


def generated(fn, *args) -> Generated:
    """Run fn(*args), which calls compiled code, from Dynamo's state reset (so it
    compiles anew) and keep the code Inductor writes: the forward's module, and
    the backward's when fn runs a backward."""
    if not callable(fn):
        raise TypeError(f"generated: fn must be callable, got {type(fn).__name__}")
    from torch._inductor.utils import run_and_get_code

    result, sources = run_and_get_code(fn, *args)
    kernels = [{m[1]: m[3] for m in KERNEL.finditer(s)} for s in sources]
    library = [LIBRARY.findall(s) for s in sources]
    return Generated(result, sources, kernels, library)


def kernel_body(source: str, lines: int = 40) -> str:
    """A kernel's source from its definition on (the Triton decorator's tuning
    metadata left out), at most `lines` lines."""
    text = source.strip("\n").splitlines()
    start = next(
        (i for i, s in enumerate(text) if s.startswith(("@triton.jit", 'extern "C"'))),
        0,
    )
    body = text[start:]
    more = len(body) - lines
    return "\n".join(body[:lines] + ([f"... ({more} more lines)"] if more > 0 else []))


# --8<-- [end:generated]


def first_call_s(step, batch) -> float:
    """Seconds of step(*batch) on the wall clock, the device synchronised: for a
    compiled step's first call, the compile time (forward and backward)."""
    start = time.perf_counter()
    step(*batch)
    if batch[0].is_cuda:
        torch.cuda.synchronize()
    return time.perf_counter() - start
