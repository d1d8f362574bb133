"""What a user would otherwise write: the same operation in NumPy (CPU, float32) and,
where PyTorch is installed, in PyTorch on the GPU (cuBLAS for matmul, TF32 off)."""

from __future__ import annotations

import numpy as np


def _sigmoid(z):
    with np.errstate(over="ignore"):  # exp(-z) overflows to inf: sigmoid is then 0
        return 1.0 / (1.0 + np.exp(-z))


NUMPY = {
    "copy": lambda x: x.copy(),
    "vector_add": lambda x, y: x + y,
    "matrix_add": lambda a, b: a + b,
    "sigmoid": _sigmoid,
    "matmul": lambda a, b: a @ b,
    "neuron_layer": lambda W, x, b: _sigmoid(W @ x + b),
}


def torch_ops():
    """PyTorch equivalents, or {} when PyTorch (with CUDA) is not installed."""
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    torch.backends.cuda.matmul.allow_tf32 = False  # compare float32 with float32
    return {
        "copy": lambda x: x.clone(),
        "vector_add": lambda x, y: x + y,
        "matrix_add": lambda a, b: a + b,
        "sigmoid": torch.sigmoid,
        "matmul": torch.matmul,
        "neuron_layer": lambda W, x, b: torch.sigmoid(torch.addmv(b, W, x)),
    }
