"""B16: torch.compile against PyTorch eager and against the package's kernels, in
milliseconds per training step, for two models (beyond/compiled.py):

    MLP                A4's network (64 -> 128 ReLU -> 10), a batch of 32, SGD
    Transformer block  one block at A16's "large" width (C = 384, 6 heads), 64
                       sequences of T = 128, the loss sum(block(x) * G), AdamW

Each way computes the same step on the same weights and batch, float32 (TF32
off), the batch kept on the device:

    PyTorch eager         the module, loss.backward(), the optimizer's step
    torch.compile         the module through torch.compile (default mode):
                          Inductor's kernels for the forward and the backward,
                          the matmuls left to cuBLAS
    max-autotune-no-...   the same, Inductor choosing each matmul among its own
                          Triton templates and cuBLAS by timing them; its bar
                          only where it compiles within AUTOTUNE_LIMIT_S
    reduce-overhead       the default mode's kernels, replayed as CUDA graphs
                          (one launch a graph, not one per kernel)
    the package's kernels the MLP: layers.Network.train_step as A4 trains it
                          (which uploads its learning rate each step); the
                          block: transformer.Block with A16's Linear, its
                          backward from G, transformer.AdamW, the step's
                          launches replayed as A16's Trainer replays them

In every PyTorch way the optimizer's step is eager (PyTorch's foreach kernels):
torch.compile compiles the module. The package's block also computes dx (the
gradient into the block), which PyTorch's ways skip, x needing no gradient; it
does not compute the scalar L, whose gradient G it starts from.

Each time is a median over windows of back-to-back steps, CUDA events around a
window (no hold kernel: the host's launch cost is part of a step), after
warm-up. A compile is timed apart, as the wall clock of a compiled step's first
call (forward and backward compiled), with Inductor's and Triton's caches fresh
(torch._inductor.utils.fresh_cache), after a one-line compile has paid for
importing Inductor and starting its compile workers.

quick (the CPU layer): the same ways where the CPU has them, eager, Inductor's
C++ for the MLP only (one small compile) and the package's kernels on the CPU
backend, at the block's small size.
"""

from __future__ import annotations

import contextlib
import gc

from thousand.cuda import median, on_cpu, time_ms
from thousand.experiments import Experiment, Note

EAGER = "PyTorch eager"
COMPILED = "torch.compile"
AUTOTUNE = "max-autotune-no-cudagraphs"
GRAPHS = "reduce-overhead (CUDA graphs)"
OURS = "the package's kernels"
WAYS = (EAGER, COMPILED, AUTOTUNE, GRAPHS, OURS)
MODE = {  # torch.compile's mode for each compiled way
    COMPILED: "default",
    AUTOTUNE: "max-autotune-no-cudagraphs",
    GRAPHS: "reduce-overhead",
}
MLP, BLOCK = "MLP (A4)", "Transformer block (A16 large)"
AUTOTUNE_LIMIT_S = 120  # max-autotune's bar only if it compiles within this
# steps in one timed window, windows, warm-up steps (reduce-overhead records its
# graphs on the second call and replays them from the third)
TIMING = {MLP: (50, 15, 5), BLOCK: (10, 15, 5)}
QUICK_TIMING = (2, 3, 1)


def _setups(C, quick: bool):
    """model name -> (PyTorch's (model, optimizer, batch) on a device, the
    package's step)."""
    cfg, B = (C.QUICK_BLOCK, C.QUICK_BATCH) if quick else (C.BLOCK, C.BLOCK_BATCH)
    return {
        MLP: (C.mlp_torch, lambda: C.mlp_kernels()[1]),
        BLOCK: (
            lambda where: C.block_torch(where, cfg, B),
            lambda: C.KernelBlock(cfg, B),
        ),
    }


def _fresh_caches():
    """Inductor's and Triton's caches in a new folder while it is open."""
    import torch._inductor.utils as utils

    fresh = getattr(utils, "fresh_cache", None) or utils.fresh_inductor_cache
    try:
        return fresh(delete=False)  # kernels load from it after the first call
    except TypeError:  # a PyTorch without the argument
        return fresh()


def ms_per_step(call, steps: int, windows: int) -> float:
    samples = time_ms(
        lambda: [call() for _ in range(steps)], warmup=1, repeat=windows, hold=False
    )
    return median(samples) / steps


def _release(torch):
    torch._dynamo.reset()  # compiled code and CUDA graph trees (their memory)
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _measure(C, setup, kernels, way, timing, quick):
    """(ms per step, compile seconds or None) of one way; ms None where
    max-autotune took longer than AUTOTUNE_LIMIT_S to compile."""
    steps, windows, warmup = timing
    compile_s = None
    if way == OURS:
        call = kernels()
    else:
        model, opt, batch = setup(C.device())
        step = C.train_step(model, opt, MODE.get(way))
        if way in MODE:  # the first call compiles: timed apart, caches fresh
            with contextlib.nullcontext() if quick else _fresh_caches():
                compile_s = C.first_call_s(step, batch)
            if way == AUTOTUNE and compile_s > AUTOTUNE_LIMIT_S:
                return None, compile_s

        def call():
            step(*batch)

    for _ in range(warmup):
        call()
    return ms_per_step(call, steps, windows), compile_s


def run(quick: bool) -> dict:
    from thousand.optional import require

    torch = require("torch", "B16's experiment")
    from thousand.beyond import compiled as C

    where = C.device()
    if where != "cuda" and not on_cpu():
        raise RuntimeError(
            "b16-compile: the package's kernels run on the GPU but PyTorch has no "
            "CUDA here; install PyTorch's CUDA build"
        )
    ways = [EAGER, COMPILED, OURS] if where == "cpu" else list(WAYS)
    series = {name: [None] * len(WAYS) for name in (MLP, BLOCK)}
    compile_s: dict = {}
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # float32 as our kernels compute
    try:
        if not quick:  # Inductor's import and workers, charged to no model
            torch.compile(lambda a: a * 2 + 1)(torch.ones(8, device=where))
            _release(torch)
        for name, (setup, kernels) in _setups(C, quick).items():
            timing = QUICK_TIMING if quick else TIMING[name]
            for way in ways:
                if quick and way == COMPILED and name == BLOCK:
                    continue  # one small compile on the CPU: the MLP's
                ms, s = _measure(C, setup, kernels, way, timing, quick)
                series[name][WAYS.index(way)] = ms
                if s is not None:
                    compile_s[name, way] = s
                _release(torch)  # this way's graphs and memory go first
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before

    def speedup(name, way):  # eager's time over the way's: > 1 is faster
        eager, t = series[name][0], series[name][WAYS.index(way)]
        return eager / t if eager and t else 0.0

    notes = {}
    for key, name in (("mlp", MLP), ("block", BLOCK)):
        for tag, way in (
            ("compiled", COMPILED),
            ("autotune", AUTOTUNE),
            ("graphs", GRAPHS),
        ):
            notes[f"{key}_{tag}_x"] = speedup(name, way)
            notes[f"{key}_{tag}_s"] = compile_s.get((name, way), 0.0)
        notes[f"{key}_ours_x"] = speedup(name, OURS)
    return {
        "kind": "bars",
        "x": {"label": "way", "values": list(WAYS)},
        "y": {"label": "ms per training step", "log": True, "format": "{:.3g}"},
        "series": series,
        "notes": notes,
    }


def _notes() -> dict:
    models = {"mlp": ("MLP", "the MLP"), "block": ("Transformer 块", "the block")}
    ways = {
        "compiled": ("torch.compile", "torch.compile"),
        "autotune": ("max-autotune", "max-autotune"),
        "graphs": ("reduce-overhead", "reduce-overhead"),
    }
    out = {}
    for key, (zh_m, en_m) in models.items():
        for tag, (zh_w, en_w) in ways.items():
            out[f"{key}_{tag}_x"] = Note(
                f"{zh_m}：{zh_w} 比 eager 快（倍；0 表示未运行）",
                f"{en_m}: {en_w} over eager (times faster; 0: not run)",
                "{:.2f}×",
            )
            out[f"{key}_{tag}_s"] = Note(
                f"{zh_m}：{zh_w} 的编译时间，首次调用的墙钟 (s)",
                f"{en_m}: {en_w}'s compile, the first call's wall clock (s)",
                "{:.1f}",
            )
        out[f"{key}_ours_x"] = Note(
            f"{zh_m}：本站核函数比 eager 快（倍）",
            f"{en_m}: the package's kernels over eager (times faster)",
            "{:.2f}×",
        )
    return out


EXPERIMENT = Experiment(
    name="b16-compile",
    title={
        "zh": "一个训练步的耗时：PyTorch eager、torch.compile 的三种模式与本站核函数"
        "（A4 的 MLP，A16 large 宽度的一个 Transformer 块）",
        "en": "One training step: PyTorch eager, three torch.compile modes and the "
        "package's kernels (A4's MLP, a Transformer block at A16's large width)",
    },
    run=run,
    # what the package's two steps launch: A4's MLP, and a block of A16's model
    families=(
        "matmul",
        "matmul_tn",
        "transpose",
        "bias_add",
        "bias_relu",
        "relu_backward",
        "col_sum",
        "softmax_xent",
        "sgd",
        "layer_norm",
        "layer_norm_backward",
        "split_heads",
        "merge_heads",
        "attention",
        "attention_backward",
        "matrix_add",
        "gelu",
        "gelu_backward",
        "adamw",
    ),
    files=(
        "beyond/compiled.py",
        "models/mlp.py",
        "models/layers.py",
        "models/transformer.py",
        "models/transformer_twin.py",
        "models/gpt.py",
    ),
    notes=_notes(),
    zh={
        "way": "方式",
        "ms per training step": "每个训练步的毫秒数",
        EAGER: "PyTorch eager",
        COMPILED: "torch.compile",
        AUTOTUNE: "max-autotune-no-cudagraphs",
        GRAPHS: "reduce-overhead（CUDA 图）",
        OURS: "本站的核函数",
        MLP: "MLP（A4）",
        BLOCK: "Transformer 块（A16 large）",
    },
)
