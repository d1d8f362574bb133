"""A7: the vanishing gradient, measured. An Elman network and an LSTM with the
same hidden width, freshly initialised (uniform in +-1/sqrt(H), the LSTM's forget
bias at +1), read random symbols for T steps; the loss is the cross-entropy at the
last step only. Backpropagation through time leaves dL/dh_t for every step in the
layer (Recurrent.dh); the chart shows its norm (root of the mean over the batch of
the squared per-sequence norms) against how many steps before the loss h_t lies.
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import to_device
from thousand.experiments import Experiment, Note
from thousand.models import rnn

K = 8  # symbols
ELMAN, LSTM = "Elman", "LSTM"


def grad_norms(kind: str, T: int, B: int, H: int, seed: int = 0) -> np.ndarray:
    """||dL/dh_t|| for t = T-1 (the loss's own step) back to t = 0."""
    cfg = rnn.Config(kind=kind, n_in=K, hidden=H, n_out=K)
    model = rnn.SequenceModel(cfg, rnn.init_params(cfg, seed))
    rng = np.random.default_rng(seed)
    X = rnn.one_hot(rng.integers(0, K, (T, B)), K)
    Y = rnn.one_hot(rng.integers(0, K, (1, B)), K)
    model.forward(to_device(X), to_device(Y), scored=T - 1)
    model.backward()
    dh = model.rnn.dh.get().astype(np.float64)  # (T, B, H)
    per_t = np.sqrt((dh**2).sum(axis=2).mean(axis=1))  # (T,)
    return per_t[::-1]  # index k: k steps before the loss


def run(quick: bool) -> dict:
    T, B, H = (12, 4, 8) if quick else (100, 64, 128)
    kinds = ((ELMAN, "elman"), (LSTM, "lstm"))
    norms = {name: grad_norms(kind, T, B, H) for name, kind in kinds}
    lag = T - 1
    return {
        "kind": "lines",
        "x": {"label": "steps before the loss", "values": list(range(T)), "log": False},
        "y": {"label": "||dL/dh_t||", "log": True, "format": "{:.2e}"},
        "series": {name: [float(v) for v in n] for name, n in norms.items()},
        "notes": {
            "steps": T - 1,
            "elman_decay": float(norms[ELMAN][lag] / norms[ELMAN][0]),
            "lstm_decay": float(norms[LSTM][lag] / norms[LSTM][0]),
            "elman_per_step": float((norms[ELMAN][lag] / norms[ELMAN][0]) ** (1 / lag)),
            "lstm_per_step": float((norms[LSTM][lag] / norms[LSTM][0]) ** (1 / lag)),
        },
    }


EXPERIMENT = Experiment(
    name="a7-vanishing",
    title={
        "zh": "梯度消失的实测：损失处往前 t 步的 ‖∂L/∂h_t‖，Elman 网络对比 LSTM"
        "（刚初始化）",
        "en": "The vanishing gradient measured: ||dL/dh_t|| t steps before the loss, "
        "Elman network against LSTM (freshly initialised)",
    },
    run=run,
    families=(
        "lstm_cell",
        "lstm_cell_backward",
        "elman_step",
        "tanh_backward",
        "matmul",
        "matmul_tn",
        "matrix_add",
        "bias_add",
        "transpose",
        "col_sum",
        "softmax_xent",
        "copy",
    ),
    files=("models/rnn.py", "models/layers.py"),
    notes={
        "steps": Note(
            "最早一步距损失的步数", "steps from the earliest h_t to the loss", "{:.0f}"
        ),
        "elman_decay": Note(
            "Elman：最早一步的梯度范数 / 损失处的",
            "Elman: norm at the earliest step / at the loss",
            "{:.1e}",
        ),
        "lstm_decay": Note(
            "LSTM：最早一步的梯度范数 / 损失处的",
            "LSTM: norm at the earliest step / at the loss",
            "{:.1e}",
        ),
        "elman_per_step": Note(
            "Elman：平均每步的衰减因子", "Elman: mean factor per step", "{:.3f}"
        ),
        "lstm_per_step": Note(
            "LSTM：平均每步的衰减因子", "LSTM: mean factor per step", "{:.3f}"
        ),
    },
    zh={
        "steps before the loss": "距损失的步数",
        "||dL/dh_t||": "‖∂L/∂h_t‖",
        ELMAN: "Elman",
        LSTM: "LSTM",
    },
)
