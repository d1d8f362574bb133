"""Pieces that several experiments use alike, kept here once.

`EXTENSION_FILES` are what a result that builds B15's PyTorch extension depends on;
`share_note` describes a figure that is a share of a baseline; `torch_tf32` sets
PyTorch's TF32 switches for a comparison and puts them back. None is an
experiment: `all_experiments` reads only modules named after a post.
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
    for name, value in (("on", on), ("cublas", cublas), ("cudnn", cudnn)):
        if not isinstance(value, bool):
            raise TypeError(f"torch_tf32: {name} must be a bool, got {value!r}")
    import torch

    flags = [torch.backends.cuda.matmul] * cublas + [torch.backends.cudnn] * cudnn
    before = [f.allow_tf32 for f in flags]
    for f in flags:
        f.allow_tf32 = on
    try:
        yield
    finally:
        for f, was in zip(flags, before, strict=True):
            f.allow_tf32 = was
