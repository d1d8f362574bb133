"""Beyond CUDA C (B13-B16): computations of this package written again with the tools
engineers reach for next, each beside the CUDA C family that computes the same thing,
so that one run times both.

    triton_matmul.py, triton_softmax.py   B13  Triton (its interpreter off a GPU)
    cutile_kernels.py                     B14  cuTile Python (Hopper, CUDA 13.4 tools)
    extension.py, gelu_extension.cpp/.cu  B15  a PyTorch extension and custom op
    compiled.py                           B16  torch.compile

PyTorch and Triton are optional: `pip install -e ".[beyond]"` (off a GPU, install
PyTorch's CPU build first). Each module names what is missing and how to install it.
"""

from __future__ import annotations

import os
import sys


def triton():
    """Triton, imported so that its kernels run where this package's kernels run:
    on the GPU, or, on the CPU backend (THOUSAND_BACKEND=cpu, or no GPU), in
    Triton's interpreter (TRITON_INTERPRET=1, which @triton.jit reads when it
    decorates a kernel, so it must be set before the first kernel module loads)."""
    from thousand.cuda import on_cpu
    from thousand.optional import require

    if on_cpu() and not interpreted():
        if "triton" in sys.modules:  # its own tl.sum & co. are compiled already
            raise RuntimeError(
                "Triton was imported before the CPU backend could choose its "
                "interpreter: set TRITON_INTERPRET=1 before importing triton"
            )
        os.environ["TRITON_INTERPRET"] = "1"
    require("torch", "Triton's kernels")  # Triton takes torch tensors
    return require("triton", "Triton's kernels")


def interpreted() -> bool:
    """Whether Triton's kernels run in its interpreter (on the CPU) here."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")
