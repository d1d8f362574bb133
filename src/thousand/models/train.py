"""Train a model of track A on the digits, on the kernels, and the same model in
NumPy on the CPU; print the curve, the held-out accuracy and the time ratio.

    python -m thousand.models.train mlp [--seed 0] [--epochs 30] [--quick]

The seed (weights and batch order) is printed; the held-out split is fixed
(data.SPLIT_SEED). On the CPU backend the kernels run in emulation: the script says
so, and --quick trains for 2 epochs so that it finishes in seconds.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from thousand.cuda import backend, on_cpu, timing_label
from thousand.models import mlp
from thousand.models.data import SPLIT_SEED, digits

QUICK_EPOCHS = 2


# --8<-- [start:train-mlp]
def train_mlp(seed: int = 0, epochs: int | None = None, log=print) -> dict:
    """The MLP of A4 on the digits: kernels first, then its NumPy twin (float32,
    same weights, same batches). Returns the curve and the figures."""
    X_train, X_test, y_train, y_test = digits()
    settings = {**mlp.DIGITS_SETTINGS, **({"epochs": epochs} if epochs else {})}
    log(
        f"MLP {' -> '.join(map(str, mlp.DIGITS_SIZES))}, hidden {mlp.DIGITS_HIDDEN}, "
        f"softmax cross-entropy, SGD lr {settings['lr']}, batch {settings['batch']}"
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

    net = mlp.network(mlp.DIGITS_SIZES, mlp.DIGITS_HIDDEN, seed)
    data = {"X_test": X_test, "y_test": y_test}
    kernel_s = mlp.fit(net, X_train, y_train, seed=seed, log=record, **data, **settings)
    twin = mlp.network_twin(mlp.DIGITS_SIZES, mlp.DIGITS_HIDDEN, seed)
    numpy_s = mlp.fit(twin, X_train, y_train, seed=seed, **settings)
    return {
        "seed": seed,
        **settings,
        "curve": curve,
        "accuracy": mlp.accuracy(net, X_test, y_test),
        "numpy_accuracy": mlp.accuracy(twin, X_test, y_test),
        "kernel_seconds": kernel_s,
        "numpy_seconds": numpy_s,
    }


# --8<-- [end:train-mlp]

MODELS = {"mlp": train_mlp}


def report(r: dict, log=print) -> None:
    label = timing_label()
    log(f"held-out accuracy, kernels: {r['accuracy']:.2%}")
    log(f"held-out accuracy, NumPy twin: {r['numpy_accuracy']:.2%}")
    log(f"training time, {label}: {r['kernel_seconds']:.3f} s")
    log(f"training time, NumPy (CPU): {r['numpy_seconds']:.3f} s")
    log(f"time ratio {label} / NumPy: {r['kernel_seconds'] / r['numpy_seconds']:.2f}")
    if on_cpu():
        log(
            "(the kernels ran on the CPU backend: these are CPU emulation times, "
            "not GPU times)"
        )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m thousand.models.train")
    p.add_argument("model", choices=sorted(MODELS))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epochs", type=int, default=None)
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_EPOCHS} epochs: a check that it runs (the CPU backend)",
    )
    a = p.parse_args(argv)
    if a.quick and a.epochs:
        p.error("--quick sets the epochs; give one or the other")
    epochs = QUICK_EPOCHS if a.quick else a.epochs
    if on_cpu() and not a.quick:
        print(
            "thousand: the CPU backend emulates the GPU thread by thread, so a "
            "full run is slow (--quick trains for 2 epochs)",
            file=sys.stderr,
        )
    np.set_printoptions(precision=4)
    report(MODELS[a.model](seed=a.seed, epochs=epochs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
