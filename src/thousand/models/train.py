"""Train a model of track A on the kernels, and the same model as its twin; print
the curve, the held-out accuracy and the time ratio.

    python -m thousand.models.train mlp|lenet [--seed 0] [--epochs N] [--quick]
    python -m thousand.models.train transformer [--seed 0] [--steps N] [--quick]

MLP and LeNet-5 learn the digits, against their NumPy twins on the CPU; the
Transformer learns to reverse digits (data.reversal), against its PyTorch twin
(on the GPU when PyTorch has CUDA). The seed (weights and batch order) is
printed; the held-out split is fixed (data.SPLIT_SEED). On the CPU backend the
kernels run in emulation: the script says so, and --quick trains for 2 epochs
(LeNet-5 on 256 images only; the Transformer a few steps of a tiny one) so that it
finishes in seconds.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from thousand.cuda import backend, on_cpu, timing_label
from thousand.models import lenet, mlp, transformer
from thousand.models.data import SPLIT_SEED, digits, reversal_split

# --8<-- [start:models]
MODELS = {
    "mlp": {
        "describe": f"MLP {' -> '.join(map(str, mlp.DIGITS_SIZES))}, "
        f"hidden {mlp.DIGITS_HIDDEN}",
        "data": digits,
        "network": lambda seed: mlp.network(mlp.DIGITS_SIZES, mlp.DIGITS_HIDDEN, seed),
        "twin": lambda seed: mlp.network_twin(
            mlp.DIGITS_SIZES, mlp.DIGITS_HIDDEN, seed
        ),
        "settings": mlp.DIGITS_SETTINGS,
    },
    "lenet": {
        "describe": "LeNet-5 (C1 S2 C3 S4 C5 F6), tanh, 32 x 32 inputs",
        "data": lenet.digit_images,
        "network": lenet.network,
        "twin": lenet.network_twin,
        "settings": lenet.SETTINGS,
    },
}
# --8<-- [end:models]
QUICK_EPOCHS = 2
QUICK_LIMIT = {"mlp": None, "lenet": 256}  # training images in a --quick run


# --8<-- [start:train]
def train(
    name: str,
    seed=0,
    epochs=None,
    train_limit=None,
    test_limit=None,
    numpy_epochs=None,
    log=print,
):
    """Train model `name` on the digits: kernels first, then its NumPy twin
    (float32, same weights, same batches; `numpy_epochs` of them when given, to
    time fewer). Returns the curve and the figures. The limits take the first
    images of each set (for short runs)."""
    if epochs is not None and epochs < 1:
        raise ValueError(f"epochs must be at least 1, not {epochs}")
    m = MODELS[name]
    X_train, X_test, y_train, y_test = m["data"]()
    X_train, y_train = X_train[:train_limit], y_train[:train_limit]
    X_test, y_test = X_test[:test_limit], y_test[:test_limit]
    settings = {**m["settings"], **({} if epochs is None else {"epochs": epochs})}
    log(
        f"{m['describe']}; softmax cross-entropy, SGD lr {settings['lr']}"
        + (f" x {settings['decay']}^(epoch-1)" if settings.get("decay", 1) != 1 else "")
        + f", batch {settings['batch']}, {settings['epochs']} epochs"
    )
    log(
        f"digits: {len(X_train)} training, {len(X_test)} held out "
        f"(split seed {SPLIT_SEED}); seed {seed}; kernels on the {backend().upper()}"
    )
    curve = {"epoch": [], "loss": [], "accuracy": []}

    def record(epoch, loss, acc):
        for key, value in zip(curve, (epoch, loss, acc), strict=True):
            curve[key].append(value)
        log(f"epoch {epoch:3d}  training loss {loss:.4f}  held-out {acc:6.2%}")

    net = m["network"](seed)
    held_out = {"X_test": X_test, "y_test": y_test}
    kernel_s = mlp.fit(
        net, X_train, y_train, seed=seed, log=record, **held_out, **settings
    )
    twin = m["twin"](seed)
    twin_settings = {**settings, "epochs": numpy_epochs or settings["epochs"]}
    numpy_s = mlp.fit(twin, X_train, y_train, seed=seed, **twin_settings)
    return {
        "model": name,
        "seed": seed,
        **settings,
        "curve": curve,
        "accuracy": mlp.accuracy(net, X_test, y_test),
        "numpy_accuracy": mlp.accuracy(twin, X_test, y_test),
        "kernel_seconds": kernel_s,
        "numpy_seconds": numpy_s,
        "numpy_epochs": twin_settings["epochs"],
    }


# --8<-- [end:train]


# --8<-- [start:transformer]
def train_transformer(seed=0, steps=None, quick=False, twin_steps=None, log=print):
    """The Transformer on digit reversal: kernels first, then the PyTorch twin
    (same weights, same batches; `twin_steps` of them when given, to time fewer).
    Returns the curve and the figures, as train() does, with steps for epochs."""
    from thousand.models import transformer_twin  # PyTorch: imported only here

    s = dict(transformer.QUICK if quick else transformer.TASK)
    if steps is not None:
        s["steps"] = steps
    cfg, L = s["config"], s["digits"]
    log(
        f"GPT: {cfg.n_layer} blocks, {cfg.n_head} heads, n_embd {cfg.n_embd}; "
        f"AdamW lr {s['lr']}, batch {s['batch']}, {s['steps']} steps"
    )
    test, draw = reversal_split(L, s["held_out"])
    log(
        f"reversal of {L} digits: fresh training sequences each step, "
        f"{len(test[0])} held out (split seed {SPLIT_SEED}); seed {seed}; "
        f"kernels on the {backend().upper()}"
    )

    def batch_of(i):  # the same batch for both at step i
        return draw(np.random.default_rng([seed, i]), s["batch"])

    curve = {"step": [], "loss": [], "accuracy": []}

    def record(step, loss, acc):
        for key, value in zip(curve, (step, loss, acc), strict=True):
            curve[key].append(value)
        log(f"step {step:4d}  training loss {loss:.4f}  held-out exact {acc:6.2%}")

    p = transformer.init(cfg, seed)
    ours = transformer.Trainer(cfg, p)
    fit = transformer.fit
    kernel_s = fit(
        ours,
        batch_of,
        steps=s["steps"],
        lr=s["lr"],
        test=test,
        every=s["every"],
        log=record,
    )
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.backends.cuda.matmul.allow_tf32 = False  # float32 against float32
    twin = transformer_twin.Trainer(cfg, p, device=device)
    n_twin = twin_steps or s["steps"]
    twin_s = fit(twin, batch_of, steps=n_twin, lr=s["lr"], every=n_twin)
    return {
        "model": "transformer",
        "seed": seed,
        "steps": s["steps"],
        "curve": curve,
        "accuracy": transformer.exact_match(ours, test),
        "twin_accuracy": transformer.exact_match(twin, test),
        "twin_device": device,
        "kernel_seconds": kernel_s,
        "twin_seconds": twin_s,
        "twin_steps": n_twin,
        "trainer": ours,
        "test": test,
    }


def report_transformer(r: dict, log=print) -> None:
    label = timing_label()
    twin = f"PyTorch ({r['twin_device'].upper()})"
    ratio = (r["kernel_seconds"] / r["steps"]) / (r["twin_seconds"] / r["twin_steps"])
    log(f"held-out exact match, kernels: {r['accuracy']:.2%}")
    log(f"held-out exact match, {twin} twin: {r['twin_accuracy']:.2%}")
    log(f"training time, {label}: {r['kernel_seconds']:.3f} s")
    log(f"training time, {twin}: {r['twin_seconds']:.3f} s ({r['twin_steps']} steps)")
    log(f"time per step ratio {label} / {twin}: {ratio:.2f}")
    if on_cpu():
        log("(the kernels ran on the CPU backend: each time above is a CPU emulation)")


# --8<-- [end:transformer]


def time_ratio(r: dict) -> float:
    """Kernel time over NumPy time, per epoch (the twin may train fewer)."""
    return (r["kernel_seconds"] / r["epochs"]) / (
        r["numpy_seconds"] / r["numpy_epochs"]
    )


def report(r: dict, log=print) -> None:
    label = timing_label()
    log(f"held-out accuracy, kernels: {r['accuracy']:.2%}")
    log(f"held-out accuracy, NumPy twin: {r['numpy_accuracy']:.2%}")
    log(f"training time, {label}: {r['kernel_seconds']:.3f} s")
    log(f"training time, NumPy (CPU): {r['numpy_seconds']:.3f} s")
    log(f"time ratio {label} / NumPy: {time_ratio(r):.2f}")
    if on_cpu():
        log("(the kernels ran on the CPU backend: each time above is a CPU emulation)")


def whole_number(least: int):
    """An argparse type: an int no smaller than `least`, said plainly if not."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, not {value}")
        return value

    return parse


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m thousand.models.train",
        description="Train a model of track A on the digits on the kernels, then "
        "its NumPy twin; print the curve, the accuracy and the time ratio.",
    )
    p.add_argument("model", choices=[*sorted(MODELS), "transformer"])
    p.add_argument(
        "--seed", type=whole_number(0), default=0, help="weights and batch order"
    )
    p.add_argument(
        "--epochs",
        type=whole_number(1),
        default=None,
        help="default: the model's own (mlp "
        f"{MODELS['mlp']['settings']['epochs']}, lenet "
        f"{MODELS['lenet']['settings']['epochs']})",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_EPOCHS} epochs (LeNet-5 on {QUICK_LIMIT['lenet']} images): "
        "a check that it runs, for the CPU backend",
    )
    p.add_argument(
        "--steps",
        type=whole_number(1),
        default=None,
        help=f"the Transformer's training steps (default {transformer.TASK['steps']})",
    )
    a = p.parse_args(argv)
    if a.quick and (a.epochs is not None or a.steps is not None):
        p.error("--quick sets the epochs and steps; give one or the other")
    if a.model == "transformer" and a.epochs is not None:
        p.error("the Transformer trains for --steps, not --epochs")
    if a.model != "transformer" and a.steps is not None:
        p.error(f"{a.model} trains for --epochs, not --steps")
    epochs = QUICK_EPOCHS if a.quick else a.epochs
    limit = QUICK_LIMIT.get(a.model) if a.quick else None
    if on_cpu() and not a.quick:
        print(
            "thousand: the CPU backend emulates the GPU thread by thread, so a "
            "full run is slow (--quick for a short one)",
            file=sys.stderr,
        )
    np.set_printoptions(precision=4)
    if a.model == "transformer":
        report_transformer(train_transformer(a.seed, a.steps, quick=a.quick))
        return 0
    report(train(a.model, seed=a.seed, epochs=epochs, train_limit=limit))
    return 0


if __name__ == "__main__":
    sys.exit(main())
