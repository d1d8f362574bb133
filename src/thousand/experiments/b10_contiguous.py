"""B10: what a strided view costs: summing through it, or copying it first.

A 4096 x 4096 float32 matrix `a` (64 MiB) and its transpose view `a.T`. On the
CPU, NumPy sums the rows of either, and makes the view contiguous with
np.ascontiguousarray. On the GPU, our row_sum kernel (v3) takes only C-contiguous
input, so the view must first become a real transposed copy (transpose v3); where
PyTorch with CUDA is installed, torch.sum and .contiguous() do the same jobs with
PyTorch's kernels, which accept strided tensors. The sums of `a.T`'s rows are the
column sums of `a`: every way is checked to give the same numbers.
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import empty, host_time_ms, median, on_cpu, time_ms, to_device
from thousand.experiments import Experiment, ExperimentError, Note
from thousand.kernels.copy import copy
from thousand.kernels.row_sum import row_sum
from thousand.kernels.transpose import transpose

N, QUICK_N = 4096, 64

# The operations, named in NumPy's words; contig(x) is np.ascontiguousarray(x).
SUM = "a.sum(1)"
SUM_VIEW = "a.T.sum(1)"
COPY = "a.copy()"
COPY_VIEW = "contig(a.T)"
BOTH = "contig(a.T).sum(1)"
NUMPY = "NumPy (CPU)"
OURS = "our kernels (GPU)"
TORCH = "PyTorch (GPU)"


def host_ms(fn, repeat: int) -> float:
    return median(host_time_ms(fn, repeat=repeat))


def _check(got, expected, what: str) -> None:
    got = np.asarray(got, dtype=np.float64)
    if np.abs(got - expected).max() > 1e-5 * np.abs(expected).max():
        raise ExperimentError(f"b10-contiguous: {what} gave other sums")


# --8<-- [start:numpy]
def numpy_ms(a: np.ndarray, repeat: int) -> dict:
    out = np.empty(a.shape[0], np.float32)
    return {
        SUM: host_ms(lambda: np.sum(a, axis=1, out=out), repeat),
        SUM_VIEW: host_ms(lambda: np.sum(a.T, axis=1, out=out), repeat),  # strided
        COPY: host_ms(lambda: a.copy(), repeat),
        COPY_VIEW: host_ms(lambda: np.ascontiguousarray(a.T), repeat),  # a new array
        BOTH: host_ms(lambda: np.ascontiguousarray(a.T).sum(axis=1), repeat),
    }


# --8<-- [end:numpy]


def ours_ms(a: np.ndarray, repeat: int) -> dict:
    n = a.shape[0]
    d_a, d_t, d_flat = to_device(a), empty((n, n)), empty((n * n,))
    d_x, d_out = to_device(a.reshape(-1)), empty((n,))

    def both():
        transpose(d_a, out=d_t)
        row_sum(d_t, out=d_out)

    ms = {
        SUM: median(time_ms(lambda: row_sum(d_a, out=d_out), repeat=repeat)),
        SUM_VIEW: None,  # the kernel refuses a strided view: check_array says so
        COPY: median(time_ms(lambda: copy(d_x, out=d_flat), repeat=repeat)),
        COPY_VIEW: median(time_ms(lambda: transpose(d_a, out=d_t), repeat=repeat)),
        BOTH: median(time_ms(both, repeat=repeat)),
    }
    _check(d_out.get(), a.astype(np.float64).sum(axis=0), OURS)
    return ms


def torch_ms(a: np.ndarray, repeat: int) -> dict | None:
    """PyTorch's times, or None where PyTorch with CUDA is not installed."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    from thousand.cuda import driver

    driver()  # one primary context: our events see PyTorch's kernels on stream 0
    t = torch.from_numpy(a).cuda()
    out = t.new_empty(t.shape[0])
    ms = {
        SUM: median(time_ms(lambda: torch.sum(t, 1, out=out), repeat=repeat)),
        SUM_VIEW: median(time_ms(lambda: torch.sum(t.t(), 1, out=out), repeat=repeat)),
        COPY: median(time_ms(lambda: t.clone(), repeat=repeat)),
        COPY_VIEW: median(time_ms(lambda: t.t().contiguous(), repeat=repeat)),
        BOTH: median(
            time_ms(lambda: torch.sum(t.t().contiguous(), 1, out=out), repeat=repeat)
        ),
    }
    _check(out.cpu().numpy(), a.astype(np.float64).sum(axis=0), TORCH)
    return ms


def run(quick: bool) -> dict:
    n = QUICK_N if quick else N
    repeat = 3 if quick else 10
    a = np.random.default_rng(0).random((n, n), dtype=np.float32)
    cases = [SUM, SUM_VIEW, COPY, COPY_VIEW, BOTH]
    numpy = numpy_ms(a, repeat)
    _check(np.ascontiguousarray(a.T).sum(axis=1), a.astype(np.float64).sum(0), NUMPY)
    times = {NUMPY: numpy, OURS: ours_ms(a, repeat)}
    if not on_cpu():  # on the CPU backend "GPU" times are emulation: no PyTorch
        pytorch = torch_ms(a, repeat)
        if pytorch is not None:
            times[TORCH] = pytorch
    ours = times[OURS]
    return {
        "kind": "bars",
        "x": {"label": "operation", "values": cases},
        "y": {"label": "ms", "log": True, "format": "{:,.3f}"},
        "series": {name: [t[c] for c in cases] for name, t in times.items()},
        "notes": {
            "n": n,
            "numpy_view_vs_sum": numpy[SUM_VIEW] / numpy[SUM],
            "numpy_copy_view_vs_sum": numpy[COPY_VIEW] / numpy[SUM],
            "numpy_copy_view_vs_copy": numpy[COPY_VIEW] / numpy[COPY],
            "ours_copy_view_vs_sum": ours[COPY_VIEW] / ours[SUM],
            "ours_both_vs_sum": ours[BOTH] / ours[SUM],
        },
    }


EXPERIMENT = Experiment(
    name="b10-contiguous",
    title={
        "zh": "跨步视图的代价：直接在视图上求和，还是先复制成连续数组",
        "en": "What a strided view costs: sum through it, or copy it first",
    },
    run=run,
    families=("row_sum", "transpose", "copy"),
    notes={
        "n": Note(
            "矩阵的边长 n（n × n，float32）", "Matrix side n (n × n float32)", "{:,.0f}"
        ),
        "numpy_view_vs_sum": Note(
            "NumPy：在视图 a.T 上求行和，耗时是在 a 上的",
            "NumPy: row sums through the view a.T, time relative to a's",
            "{:,.2f}×",
        ),
        "numpy_copy_view_vs_sum": Note(
            "NumPy：np.ascontiguousarray(a.T) 这一次复制，耗时是一次行求和的",
            "NumPy: the copy np.ascontiguousarray(a.T), time relative to one row sum",
            "{:,.1f}×",
        ),
        "numpy_copy_view_vs_copy": Note(
            "NumPy：转置复制比同样大小的连续复制慢",
            "NumPy: the transposing copy against a plain copy of the same bytes",
            "{:,.1f}×",
        ),
        "ours_copy_view_vs_sum": Note(
            "GPU：转置核函数（让 a.T 连续）耗时是一次行求和的",
            "GPU: the transpose kernel (a.T made contiguous), time relative to one "
            "row sum",
            "{:,.1f}×",
        ),
        "ours_both_vs_sum": Note(
            "GPU：先转置再求行和，耗时是直接求行和的",
            "GPU: transpose then row sums, time relative to the row sums alone",
            "{:,.1f}×",
        ),
    },
    zh={
        "operation": "操作",
        "ms": "毫秒",
        NUMPY: "NumPy（CPU）",
        OURS: "本项目的核函数（GPU）",
        TORCH: "PyTorch（GPU）",
    },
)
