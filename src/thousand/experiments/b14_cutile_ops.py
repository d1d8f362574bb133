"""B14: cuTile's three kernels beside PyTorch and this package's CUDA C, one size
each, the same operands for every way:

    matmul TF32     4096^3 and 8192^3, float32 operands rounded to TF32 on tensor
                    cores: cuTile, cuBLAS (torch.matmul, TF32 on) and matmul_v8
                    (B9's tensor-core rung, also TF32): like with like
    bmm fp16        32 products of 1024^3 in float16 (float32 sums): cuTile and
                    torch.bmm (cuBLAS); this package has no batched GEMM
    conv2d fp16     N = 32, 56 x 56, C = K = 64, 3 x 3 filters, pad 1: cuTile's
                    implicit GEMM and cuDNN (torch conv2d on channels_last tensors,
                    the same NHWC bytes)
    conv2d TF32     the same in float32: cuTile and cuDNN in TF32, and this
                    package's conv2d_v2 (im2col, then matmul_v7 in full float32
                    on the CUDA cores, on the input padded beforehand: it has no
                    padding of its own): not like with like, and the notes say so

cuTile's tile for each is default_tile(). CUDA-event medians with L2 flushed
between repeats; TFLOP/s = 2 x multiply-adds / time, where a convolution's
multiply-adds are N P Q K R S C (padding's zeros counted, as every way computes
them). Each cuTile result is checked against PyTorch's before it is timed.
"""

from __future__ import annotations

import contextlib

import numpy as np

from thousand.cuda import median, time_ms, to_device
from thousand.experiments import Experiment, Note
from thousand.experiments.b14_cutile import WHY

CUTILE = "cuTile"
TORCH = "PyTorch (cuBLAS, cuDNN)"
CUDA_C = "CUDA C (this package)"
WAYS = [CUTILE, TORCH, CUDA_C]

MM_SIZES = [4096, 8192]
BMM = (32, 1024, 1024, 1024)  # B, M, N, K
CONV = (32, 56, 56, 64, 3, 3, 64, 1)  # N, H, W, C, R, S, K, pad
QUICK = dict(mm=[512], bmm=(4, 256, 192, 320), conv=(2, 12, 10, 8, 3, 3, 16, 1))
CHECK = {"fp16": 1e-2, "TF32": 2e-2}  # of max |y|: rounding apart; a bug is ~1


def mm_label(n):
    return f"matmul TF32 {n}³"


BMM_LABEL = "bmm fp16"
CONV16 = "conv2d fp16"
CONV32 = "conv2d TF32"


@contextlib.contextmanager
def tf32(on: bool):
    """cuBLAS and cuDNN in TF32 or not, restored after."""
    import torch

    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = on
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before


def randn(shape, seed, dtype):
    import torch

    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to("cuda", dtype)


def tflops(call, flops: int, quick: bool) -> float:
    warmup, repeat = (1, 3) if quick else (3, 10)
    ms = median(time_ms(call, warmup=warmup, repeat=repeat))
    return flops / (ms * 1e-3) / 1e12


def checked(name, kind, ours, theirs):
    from thousand.beyond.cutile_kernels import relative_error

    err = relative_error(ours(), theirs())
    if not err < CHECK[kind]:
        raise AssertionError(
            f"cuTile {name} is off PyTorch by {err:.1e} of max |y| "
            f"(allowed {CHECK[kind]})"
        )


def matmul_tf32(n: int, quick: bool) -> list:
    import torch

    from thousand.beyond import cutile_kernels as T
    from thousand.kernels.matmul import matmul as cuda_c

    a, b = (randn((n, n), seed, torch.float32) for seed in (1, 2))
    c, ref = torch.empty_like(a), torch.empty_like(a)
    da, db = (to_device(t.cpu().numpy()) for t in (a, b))
    dc = to_device(np.empty((n, n), np.float32))

    def ours():
        return T.matmul(a, b, out=c)

    def theirs():
        return torch.matmul(a, b, out=ref)

    with tf32(True):
        checked(mm_label(n), "TF32", ours, theirs)
        flops = T.flops_matmul(n, n, n)
        return [
            tflops(ours, flops, quick),
            tflops(theirs, flops, quick),
            tflops(lambda: cuda_c(da, db, out=dc, version=8), flops, quick),
        ]


def bmm_fp16(shape, quick: bool) -> list:
    import torch

    from thousand.beyond import cutile_kernels as T

    Z, M, N, K = shape
    a = randn((Z, M, K), 3, torch.float16)
    b = randn((Z, K, N), 4, torch.float16)
    c, ref = a.new_empty((Z, M, N)), a.new_empty((Z, M, N))

    def ours():
        return T.bmm(a, b, out=c)

    def theirs():
        return torch.bmm(a, b, out=ref)

    checked(BMM_LABEL, "fp16", ours, theirs)
    flops = T.flops_matmul(M, N, K, batch=Z)
    return [tflops(ours, flops, quick), tflops(theirs, flops, quick), None]


def conv(shape, dtype_name: str, quick: bool) -> list:
    import torch

    from thousand.beyond import cutile_kernels as T
    from thousand.kernels.conv2d import conv2d as cuda_c

    N, H, W, C, R, S, K, pad = shape
    dtype = torch.float16 if dtype_name == "fp16" else torch.float32
    x = randn((N, H, W, C), 5, dtype)  # NHWC
    w = randn((R, S, C, K), 6, dtype)  # RSCK, the package's layout
    y = T.conv2d(x, w, pad=pad)  # also the output every later call reuses
    xt = x.permute(0, 3, 1, 2)  # (N, C, H, W) view of NHWC memory: channels_last
    wt = w.permute(3, 2, 0, 1).contiguous(memory_format=torch.channels_last)

    def ours():
        return T.conv2d(x, w, pad=pad, out=y)

    def theirs():  # channels_last out: as NHWC, a view
        return torch.nn.functional.conv2d(xt, wt, padding=pad).permute(0, 2, 3, 1)

    flops = T.flops_conv2d(x.shape, w.shape, pad)
    before = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = True  # cuDNN times its algorithms, keeps one
    try:
        with tf32(True):
            kind = "fp16" if dtype_name == "fp16" else "TF32"
            checked(f"conv2d {dtype_name}", kind, ours, theirs)
            found = [tflops(ours, flops, quick), tflops(theirs, flops, quick)]
    finally:
        torch.backends.cudnn.benchmark = before
    if dtype_name == "fp16":  # the package's conv2d is float32 only
        return found + [None]
    padded = np.pad(x.cpu().numpy(), ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    dx, dw = to_device(padded), to_device(w.cpu().numpy())
    dy = to_device(np.empty(tuple(y.shape), np.float32))
    return found + [tflops(lambda: cuda_c(dx, dw, out=dy, version=2), flops, quick)]


def run(quick: bool) -> dict:
    from thousand.beyond.cutile_kernels import cutile

    cutile()  # stops here, saying what is missing, where cuTile cannot run
    mm = QUICK["mm"] if quick else MM_SIZES
    rows = {mm_label(n): matmul_tf32(n, quick) for n in mm}
    rows[BMM_LABEL] = bmm_fp16(QUICK["bmm"] if quick else BMM, quick)
    shape = QUICK["conv"] if quick else CONV
    rows[CONV16] = conv(shape, "fp16", quick)
    rows[CONV32] = conv(shape, "fp32", quick)
    xs = list(rows)

    def ratio(op, way, base):
        return rows[op][WAYS.index(way)] / rows[op][WAYS.index(base)]

    big = mm_label(mm[-1])
    return {
        "kind": "bars",
        "x": {"label": "operation", "values": xs},
        "y": {"label": "TFLOP/s", "format": "{:,.0f}"},
        "series": {w: [rows[x][i] for x in xs] for i, w in enumerate(WAYS)},
        "notes": {
            "tf32_vs_cublas": ratio(big, CUTILE, TORCH),
            "tf32_vs_v8": ratio(big, CUTILE, CUDA_C),
            "bmm_vs_torch": ratio(BMM_LABEL, CUTILE, TORCH),
            "conv16_vs_cudnn": ratio(CONV16, CUTILE, TORCH),
            "conv32_vs_cudnn": ratio(CONV32, CUTILE, TORCH),
            "conv32_vs_v2": ratio(CONV32, CUTILE, CUDA_C),
        },
    }


def _share(zh, en):
    return Note(zh, en, "{:.0%}")


EXPERIMENT = Experiment(
    name="b14-cutile-ops",
    title={
        "zh": "cuTile 的矩阵乘法（TF32）、批量矩阵乘法与卷积，对比 PyTorch 和本项目的 "
        "CUDA C",
        "en": "cuTile's matmul (TF32), batched GEMM and convolution against PyTorch "
        "and this package's CUDA C",
    },
    run=run,
    families=("matmul", "conv2d"),
    files=("beyond/cutile_kernels.py",),
    gpu_only=WHY,
    notes={
        "tf32_vs_cublas": _share(
            "cuTile TF32 矩阵乘法在 8192³ 时达到 cuBLAS TF32 的",
            "cuTile's TF32 matmul at 8192³, as a share of cuBLAS in TF32",
        ),
        "tf32_vs_v8": Note(
            "cuTile TF32 矩阵乘法在 8192³ 时比 CUDA C v8（同为 TF32 张量核心）快（倍）",
            "cuTile's TF32 matmul at 8192³ over CUDA C v8, also TF32 on tensor "
            "cores (times)",
            "{:,.2f}×",
        ),
        "bmm_vs_torch": _share(
            "cuTile 批量矩阵乘法（fp16）达到 torch.bmm 的",
            "cuTile's batched GEMM (fp16) as a share of torch.bmm",
        ),
        "conv16_vs_cudnn": _share(
            "cuTile 卷积（fp16）达到 cuDNN 的",
            "cuTile's convolution (fp16) as a share of cuDNN",
        ),
        "conv32_vs_cudnn": _share(
            "cuTile 卷积（TF32）达到 cuDNN TF32 的",
            "cuTile's convolution (TF32) as a share of cuDNN in TF32",
        ),
        "conv32_vs_v2": Note(
            "cuTile 卷积（TF32 张量核心）比 CUDA C conv2d_v2（float32，CUDA 核心）快"
            "（倍，精度不同）",
            "cuTile's convolution (TF32, tensor cores) over CUDA C conv2d_v2 "
            "(float32, CUDA cores): times, at different precisions",
            "{:,.1f}×",
        ),
    },
    zh={
        "operation": "运算",
        "TFLOP/s": "TFLOP/s",
        CUTILE: "cuTile",
        TORCH: "PyTorch（cuBLAS、cuDNN）",
        CUDA_C: "CUDA C（本项目）",
        **{mm_label(n): f"矩阵乘法 TF32 {n}³" for n in MM_SIZES + QUICK["mm"]},
        BMM_LABEL: "批量矩阵乘法 fp16",
        CONV16: "卷积 fp16",
        CONV32: "卷积 TF32",
    },
)
