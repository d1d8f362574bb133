"""Pieces that several experiments use alike, kept here once.

`EXTENSION_FILES` are what a result that builds B15's PyTorch extension depends on;
`share_note` describes a figure that is a share of a baseline; `torch_tf32` sets
PyTorch's TF32 switches for a comparison and puts them back; `per_epoch` makes the
result of a training curve; `twin_notes` and `TWIN_ON_GPU` describe a network timed
against its PyTorch twin. None is an experiment: `all_experiments` reads only
modules named after a post.
"""

from __future__ import annotations

import contextlib

from thousand.experiments import Note

# B15's extension: its loader and the sources it builds (relative to src/thousand,
# as Experiment.files names them); the kernels it includes are families.
EXTENSION_FILES = (
    "beyond/extension.py",
    "beyond/gelu_extension.cpp",
    "beyond/gelu_extension.cu",
    "beyond/empty.cu",
)


def share_note(zh: str, en: str) -> Note:
    """A note whose figure is a fraction of a baseline, shown as a whole percent."""
    return Note(zh, en, "{:.0%}")


@contextlib.contextmanager
def torch_tf32(on: bool, cublas: bool = True, cudnn: bool = False):
    """PyTorch's float32 matmuls (`cublas`) and convolutions (`cudnn`) in TF32 or
    not, as `on` says; both switches as they were afterwards."""
    if not (
        isinstance(on, bool) and isinstance(cublas, bool) and isinstance(cudnn, bool)
    ):
        for name, value in (("on", on), ("cublas", cublas), ("cudnn", cudnn)):
            if not isinstance(value, bool):
                raise TypeError(f"torch_tf32: {name} must be a bool, got {value!r}")
    import torch

    # B13 enters this inside each timed cuBLAS call: no work but the switches
    mm, dnn = torch.backends.cuda.matmul, torch.backends.cudnn
    before = (mm.allow_tf32 if cublas else None, dnn.allow_tf32 if cudnn else None)
    if cublas:
        mm.allow_tf32 = on
    if cudnn:
        dnn.allow_tf32 = on
    try:
        yield
    finally:
        if cublas:
            mm.allow_tf32 = before[0]
        if cudnn:
            dnn.allow_tf32 = before[1]


def per_epoch(series: dict, notes: dict, y_label: str) -> dict:
    """A "lines" result: each series one value an epoch, the epochs counted from 1."""
    epochs = len(next(iter(series.values())))
    return {
        "kind": "lines",
        "x": {"label": "epoch", "values": list(range(1, epochs + 1)), "log": False},
        "y": {"label": y_label, "log": False, "format": "{:.2f}"},
        "series": series,
        "notes": notes,
    }


def twin_notes(key: str, zh: str, en: str) -> dict[str, Note]:
    """The notes on a network's epoch on the kernels against its PyTorch twin's,
    `{key}_twin_epoch_ms` and `{key}_ratio`; `zh` and `en` name the network."""
    return {
        f"{key}_twin_epoch_ms": Note(
            f"{zh}：每轮训练时间，PyTorch 版 (ms)",
            f"{en}: training time per epoch of the PyTorch twin (ms)",
            "{:.1f}",
        ),
        f"{key}_ratio": Note(
            f"{zh}：每轮时间比，核函数版 / PyTorch 版",
            f"{en}: time per epoch, kernels / PyTorch twin",
        ),
    }


# Where the twins ran: `notes["twin_on_gpu"]` of a result that times them.
TWIN_ON_GPU = Note(
    "PyTorch 版是否在 GPU 上（1 是，0 在 CPU 上）",
    "the PyTorch twin ran on the GPU (1) or the CPU (0)",
    "{:.0f}",
)
