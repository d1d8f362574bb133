"""A7: one LSTM layer, forward and backward over a whole sequence, on the package's
kernels against torch.nn.LSTM (cuDNN), at batch 64, 128 steps, hidden 512 and
1,024 (input width = hidden), float32 with TF32 off in cuDNN and in cuBLAS. Ours
is models/rnn.Recurrent: the input projection of all steps as one GEMM, then per
step one GEMM of h_{t-1} by W_hh and the fused cell kernel; backward the same in
reverse, with the weight gradients summed over all steps by one GEMM each. Its
launches are recorded once and replayed (thousand.cuda.Replay), so the time is the
kernels' and not the Python that checks each launch. Both are timed in the same
run, CUDA-event medians; the ratio is cuDNN's time over ours (>= 1: ours faster).
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Replay, median, time_ms, to_device
from thousand.experiments import Experiment, Note
from thousand.models import rnn

B, T = 64, 128
HIDDEN = (512, 1024)
OURS, CUDNN = "ours (kernels)", "torch.nn.LSTM (cuDNN)"
FAMILIES = (
    "lstm_cell",
    "lstm_cell_backward",
    "matmul",
    "matmul_tn",
    "matrix_add",
    "bias_add",
    "transpose",
    "col_sum",
)


def ours_ms(H: int, rng) -> float:
    cfg = rnn.Config(kind="lstm", n_in=H, hidden=H, n_out=1)
    p = rnn.init_params(cfg, seed=0)
    layer = rnn.Recurrent("lstm", p["W_ih"], p["W_hh"], p["b"])
    X = to_device(rng.standard_normal((T, B, H), dtype=np.float32))
    dHs = to_device(rng.standard_normal((T, B, H), dtype=np.float32))
    layer.forward(X)  # buffers made, zeros filled
    layer.backward(dHs)
    with Replay() as step:
        layer.forward(X)
        layer.backward(dHs)
    return median(time_ms(step, warmup=2, repeat=10, hold=False))


def cudnn_ms(H: int, rng) -> float:
    import torch

    lstm = torch.nn.LSTM(H, H).cuda()  # time-major (T, B, H), as ours
    x = torch.from_numpy(rng.standard_normal((T, B, H), dtype=np.float32)).cuda()
    x.requires_grad_()
    dy = torch.from_numpy(rng.standard_normal((T, B, H), dtype=np.float32)).cuda()

    def step():
        out, _ = lstm(x)
        out.backward(dy)  # dX and every weight's gradient, as ours computes

    return median(time_ms(step, warmup=2, repeat=10, hold=False))


def run(quick: bool) -> dict:
    import torch

    flags = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
    torch.backends.cudnn.allow_tf32 = False  # float32 products, as our GEMMs
    torch.backends.cuda.matmul.allow_tf32 = False
    rng = np.random.default_rng(0)
    series = {OURS: [], CUDNN: []}
    try:
        for H in HIDDEN:
            series[OURS].append(ours_ms(H, rng))
            series[CUDNN].append(cudnn_ms(H, rng))
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = flags
    ratio = [c / o for c, o in zip(series[CUDNN], series[OURS], strict=True)]
    return {
        "kind": "bars",
        "x": {"label": "hidden units", "values": [str(h) for h in HIDDEN]},
        "y": {"label": "ms per forward + backward", "log": False, "format": "{:.2f}"},
        "series": series,
        "notes": {
            "ours_512_ms": series[OURS][0],
            "cudnn_512_ms": series[CUDNN][0],
            "ratio_512": ratio[0],
            "ours_1024_ms": series[OURS][1],
            "cudnn_1024_ms": series[CUDNN][1],
            "ratio_1024": ratio[1],
        },
    }


def _ms(zh, en):
    return Note(zh, en, "{:.2f}")


def _x(zh, en):
    return Note(zh, en, "{:.2f}x")


EXPERIMENT = Experiment(
    name="a7-lstm-speed",
    title={
        "zh": "一层 LSTM 的前向加反向（B = 64，T = 128，float32）：我们的核函数对比 "
        "cuDNN",
        "en": "One LSTM layer, forward and backward (B = 64, T = 128, float32): our "
        "kernels against cuDNN",
    },
    run=run,
    families=FAMILIES,
    files=("models/rnn.py", "models/layers.py"),
    gpu_only="it times torch.nn.LSTM on cuDNN, which needs PyTorch with CUDA and a "
    "GPU; CPU-backend times would say nothing about either",
    notes={
        "ours_512_ms": _ms("H = 512：我们的核函数 (ms)", "H = 512: our kernels (ms)"),
        "cudnn_512_ms": _ms("H = 512：cuDNN (ms)", "H = 512: cuDNN (ms)"),
        "ratio_512": _x(
            "H = 512：cuDNN 时间 / 我们的时间", "H = 512: cuDNN's time / ours"
        ),
        "ours_1024_ms": _ms(
            "H = 1024：我们的核函数 (ms)", "H = 1024: our kernels (ms)"
        ),
        "cudnn_1024_ms": _ms("H = 1024：cuDNN (ms)", "H = 1024: cuDNN (ms)"),
        "ratio_1024": _x(
            "H = 1024：cuDNN 时间 / 我们的时间", "H = 1024: cuDNN's time / ours"
        ),
    },
    zh={
        OURS: "我们的核函数",
        CUDNN: "torch.nn.LSTM（cuDNN）",
        "hidden units": "隐藏单元数",
        "ms per forward + backward": "每次前向 + 反向的毫秒数",
    },
)
