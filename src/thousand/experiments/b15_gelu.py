"""B15: GELU forward and backward over N = 2^26 floats (256 MiB a tensor, far past
the L2) three ways: this package's kernels as the PyTorch op thousand::gelu (the
extension), PyTorch's own F.gelu(x, approximate="tanh"), and the same kernels
through the package's PyCUDA launchers. Forward + backward goes through autograd
(torch.autograd.grad, which hands back dx without accumulating it into x.grad) for
the two PyTorch ways, and is the two launchers back to back for PyCUDA.

Bytes moved: the forward reads x and writes y (8N), the backward reads dy and x and
writes dx (12N). Each time is a CUDA-event median with the L2 flushed between
repeats (thousand.cuda.time_ms); every way's results are first checked against
PyTorch's.
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import median, time_ms
from thousand.experiments import Experiment, ExperimentError, Note
from thousand.kernels.gelu import FAMILY as FORWARD
from thousand.kernels.gelu_backward import FAMILY as BACKWARD

N, QUICK_N = 2**26, 2**12

EXT = "extension (thousand::gelu)"
TORCH = 'PyTorch (F.gelu, approximate="tanh")'
PYCUDA = "PyCUDA launchers (gelu_v2)"
SERIES = (EXT, TORCH, PYCUDA)
FWD, BWD, BOTH = "forward", "backward", "forward + backward"
STAGES = (FWD, BWD, BOTH)
BYTES = {FWD: 8, BWD: 12, BOTH: 20}  # per element
UNIT = "GB/s"


def ways(x, dy) -> dict:
    """way -> {stage: a call}, each with its own device arrays; and the PyTorch
    tensors their results are checked against."""
    import torch
    import torch.nn.functional as F

    from thousand.beyond import extension  # noqa: F401  (registers thousand::gelu)
    from thousand.cuda import empty, to_device
    from thousand.kernels.gelu import gelu
    from thousand.kernels.gelu_backward import gelu_backward

    op, op_bwd = torch.ops.thousand.gelu, torch.ops.thousand.gelu_backward
    tx, tdy = torch.from_numpy(x).cuda(), torch.from_numpy(dy).cuda()
    tx_grad = tx.detach().clone().requires_grad_()

    def autograd(f):
        return lambda: torch.autograd.grad(f(tx_grad), tx_grad, tdy)[0]

    def torch_gelu(t):
        return F.gelu(t, approximate="tanh")

    d_x, d_dy = to_device(x), to_device(dy)  # PyCUDA's arrays: GPUArrays
    d_y, d_dx = empty(x.shape), empty(x.shape)

    def pycuda_both():
        gelu(d_x, out=d_y)
        return gelu_backward(d_dy, d_x, out=d_dx)

    return {
        EXT: {
            FWD: lambda: op(tx),
            BWD: lambda: op_bwd(tdy, tx),
            BOTH: autograd(op),
        },
        TORCH: {
            FWD: lambda: torch_gelu(tx),
            BWD: lambda: torch.ops.aten.gelu_backward(tdy, tx, approximate="tanh"),
            BOTH: autograd(torch_gelu),
        },
        PYCUDA: {
            FWD: lambda: gelu(d_x, out=d_y),
            BWD: lambda: gelu_backward(d_dy, d_x, out=d_dx),
            BOTH: pycuda_both,
        },
    }


def _host(result) -> np.ndarray:
    if hasattr(result, "detach"):
        return result.detach().cpu().numpy()
    return result.get()


def check(found: dict) -> None:
    """Every way's forward and backward against PyTorch's, with the families'
    tolerances (relative to max(|value|, 1))."""
    for stage, family in ((FWD, FORWARD), (BWD, BACKWARD)):
        want = _host(found[TORCH][stage]())
        scale = np.maximum(np.abs(want), 1)
        for way in (EXT, PYCUDA):
            err = float((np.abs(_host(found[way][stage]()) - want) / scale).max())
            # ours and PyTorch's each within the tolerance of the exact value
            if err > 2 * family.tolerance:
                raise ExperimentError(
                    f"b15-gelu: {way}'s {stage} is {err:.1e} from PyTorch's"
                )


def run(quick: bool) -> dict:
    n = QUICK_N if quick else N
    rng = np.random.default_rng(0)
    (x,) = FORWARD.typical_inputs(rng, (n,))
    dy = rng.standard_normal(n, dtype=np.float32)
    found = ways(x, dy)
    check(found)
    gbs = {way: [] for way in SERIES}
    for way in SERIES:
        for stage in STAGES:
            ms = median(time_ms(found[way][stage], repeat=5 if quick else 20))
            gbs[way].append(BYTES[stage] * n / (ms * 1e-3) / 1e9)
    both = STAGES.index(BOTH)
    return {
        "kind": "bars",
        "x": {"label": "pass", "values": list(STAGES)},
        "y": {"label": UNIT, "format": "{:,.0f}"},
        "series": gbs,
        "notes": {
            "ext_gbs": gbs[EXT][both],
            "torch_gbs": gbs[TORCH][both],
            "pycuda_gbs": gbs[PYCUDA][both],
            "ext_vs_torch": gbs[EXT][both] / gbs[TORCH][both],
            "ext_vs_pycuda": gbs[EXT][both] / gbs[PYCUDA][both],
            "n": n,
        },
    }


EXPERIMENT = Experiment(
    name="b15-gelu",
    title={
        "zh": "GELU 前向与反向，2^26 个 float32：扩展算子、PyTorch 与 PyCUDA",
        "en": "GELU forward and backward over 2^26 float32: the extension's op, "
        "PyTorch and PyCUDA",
    },
    run=run,
    families=("gelu", "gelu_backward"),
    files=(
        "beyond/extension.py",
        "beyond/gelu_extension.cpp",
        "beyond/gelu_extension.cu",
        "beyond/empty.cu",
    ),
    gpu_only="it builds a CUDA extension with nvcc and times it on a GPU",
    notes={
        "ext_gbs": Note(
            "前向 + 反向，扩展算子（GB/s）",
            "forward + backward, the extension's op (GB/s)",
            "{:,.0f}",
        ),
        "torch_gbs": Note(
            "前向 + 反向，PyTorch（GB/s）",
            "forward + backward, PyTorch (GB/s)",
            "{:,.0f}",
        ),
        "pycuda_gbs": Note(
            "前向 + 反向，PyCUDA 启动器（GB/s）",
            "forward + backward, PyCUDA launchers (GB/s)",
            "{:,.0f}",
        ),
        "ext_vs_torch": Note(
            "扩展算子的速度是 PyTorch 的",
            "the extension's op's speed as a share of PyTorch's",
            "{:.0%}",
        ),
        "ext_vs_pycuda": Note(
            "扩展算子的速度是 PyCUDA 启动器的",
            "the extension's op's speed as a share of the PyCUDA launchers'",
            "{:.0%}",
        ),
        "n": Note("元素个数 N", "elements N", "{:,.0f}"),
    },
    zh={
        "pass": "计算",
        UNIT: "GB/s",
        EXT: "扩展（thousand::gelu）",
        TORCH: 'PyTorch（F.gelu，approximate="tanh"）',
        PYCUDA: "PyCUDA 启动器（gelu_v2）",
        FWD: "前向",
        BWD: "反向",
        BOTH: "前向 + 反向",
    },
)
