"""A5: an RBM trained by CD-1 on the binarised digits, on the kernels: the held-out
reconstruction error after each epoch, and what its first hidden units learned
(their weights drawn as 8 x 8 pictures)."""

from __future__ import annotations

from thousand.experiments import Experiment, Note
from thousand.models import rbm as R

FILTERS = 16


def run(quick: bool) -> dict:
    X_train, X_test = R.binary_digits()
    s = {**R.SETTINGS, **({"epochs": 2} if quick else {})}
    model = R.RBM(*R.init(X_train.shape[1], s["n_hidden"], seed=0))
    errors = []
    R.train(
        model,
        X_train,
        epochs=s["epochs"],
        batch=s["batch"],
        lr=s["lr"],
        seed=0,
        X_test=X_test,
        log=lambda epoch, err: errors.append(err),
    )
    return {
        "kind": "lines",
        "x": {
            "label": "epoch",
            "values": list(range(1, len(errors) + 1)),
            "log": False,
        },
        "y": {"label": "mean squared error", "log": False, "format": "{:.4f}"},
        "series": {"held-out reconstruction error": errors},
        "notes": {"hidden": s["n_hidden"], "final": errors[-1]},
        # the first FILTERS hidden units' weights, each an 8 x 8 picture
        "images": {
            "label": f"weights of hidden units 1-{FILTERS}, as 8 x 8 pictures",
            "shape": [8, 8],
            "values": model.W.get()[:, :FILTERS].T.tolist(),
        },
    }


EXPERIMENT = Experiment(
    name="a5-rbm-digits",
    title={
        "zh": "RBM 用 CD-1 在二值化 digits 上训练：留出集重构误差",
        "en": "An RBM trained by CD-1 on binarised digits: held-out reconstruction",
    },
    run=run,
    families=("matmul", "transpose", "bias_sigmoid", "bernoulli", "col_sum", "sgd"),
    notes={
        "hidden": Note("隐藏单元数", "hidden units", "{:.0f}"),
        "final": Note(
            "最后一轮的重构误差", "reconstruction error after the last epoch", "{:.4f}"
        ),
    },
    zh={
        "epoch": "轮次 (epoch)",
        "mean squared error": "均方误差",
        "held-out reconstruction error": "留出集重构误差",
    },
)
