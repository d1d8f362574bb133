"""B13: float32 matrix products three ways at 4096^3 and 8192^3, on the same
operands: this package's CUDA C (B9: v7 on the CUDA cores, v8 on tensor cores in
TF32), Triton v3 (full float32 with precision="ieee"; TF32 autotuned over the
tiles made for 4-byte operands, over fp16's list, and with B stored K-major) and
cuBLAS through torch.matmul with TF32 off and on. CUDA-event medians, L2 flushed
between repeats; TFLOP/s = 2 M N K / time.
"""

from __future__ import annotations

from thousand.cuda import on_cpu, to_device
from thousand.experiments import Experiment, Note
from thousand.experiments.b13_triton_matmul import (
    QUICK_SIZES,
    SIZES,
    cublas_tf32,
    operands,
    tflops,
)

V7 = "CUDA C v7 fp32"
IEEE = "Triton fp32"
CUBLAS32 = "cuBLAS fp32"
V8 = "CUDA C v8 TF32"
TF32_2B = "Triton TF32, fp16's tiles"
TF32 = "Triton TF32"
TF32_KMAJOR = "Triton TF32, B K-major"
CUBLAS_TF32 = "cuBLAS TF32"
WAYS = [V7, IEEE, CUBLAS32, V8, TF32_2B, TF32, TF32_KMAJOR, CUBLAS_TF32]


def calls(a, b, c):
    """way -> a no-argument call computing c = a b (the CUDA C rungs on their own
    PyCUDA copies of a and b)."""
    import torch

    from thousand.beyond import triton_matmul as T
    from thousand.kernels.matmul import matmul

    host = [t.cpu().numpy() for t in (a, b)]
    # the same B stored transposed, (N, K) row-major, and seen as (K, N): each of
    # its columns is contiguous along K, the layout Hopper's wgmma reads TF32 in
    b_kmajor = b.t().contiguous().t()
    da, db = (to_device(h) for h in host)
    dc = to_device(host[0] * 0)

    def cublas(tf32):
        def call():
            with cublas_tf32(tf32):
                torch.matmul(a, b, out=c)

        return call

    found = {
        V7: lambda: matmul(da, db, out=dc, version=7),
        IEEE: lambda: T.matmul(a, b, c, precision="ieee"),
        CUBLAS32: cublas(False),
        TF32_2B: lambda: T.matmul_v3(a, b, c, precision="tf32", configs=2),
        TF32: lambda: T.matmul(a, b, c, precision="tf32"),
        TF32_KMAJOR: lambda: T.matmul(a, b_kmajor, c, precision="tf32"),
        CUBLAS_TF32: cublas(True),
    }
    if not on_cpu():  # v8 is PTX for tensor cores: GPU only
        found[V8] = lambda: matmul(da, db, out=dc, version=8)
    return found


def run(quick: bool) -> dict:
    import torch

    sizes = QUICK_SIZES if quick else SIZES
    series = {}
    for n in sizes:
        a, b = operands(n, torch.float32)
        c = torch.empty_like(a)
        found = calls(a, b, c)
        series[f"{n}³"] = [
            tflops(found[w], n, quick) if w in found else None for w in WAYS
        ]

    def share(n, way, base):
        row = series[f"{n}³"]
        x, y = row[WAYS.index(way)], row[WAYS.index(base)]
        return 0.0 if x is None or y is None else x / y

    small, big = sizes[0], sizes[-1]
    return {
        "kind": "bars",
        "x": {"label": "way", "values": WAYS},
        "y": {"label": "TFLOP/s", "format": "{:,.1f}"},
        "series": series,
        "notes": {
            "tf32_small": share(small, TF32, CUBLAS_TF32),
            "tf32_big": share(big, TF32, CUBLAS_TF32),
            "tf32_2byte_big": share(big, TF32_2B, CUBLAS_TF32),
            "tf32_kmajor_small": share(small, TF32_KMAJOR, CUBLAS_TF32),
            "tf32_kmajor_big": share(big, TF32_KMAJOR, CUBLAS_TF32),
            "tf32_over_v8_big": share(big, TF32, V8),
            "v8_big": share(big, V8, CUBLAS_TF32),
            "ieee_big": share(big, IEEE, CUBLAS32),
            "v7_big": share(big, V7, CUBLAS32),
        },
    }


def _share(zh, en):
    return Note(zh, en, "{:.0%}")


EXPERIMENT = Experiment(
    name="b13-triton-fp32",
    title={
        "zh": "float32 矩阵乘法：本包的 CUDA C、Triton 与 cuBLAS"
        "（完整 float32 与 TF32）",
        "en": "float32 matmul: this package's CUDA C, Triton and cuBLAS "
        "(full float32 and TF32)",
    },
    run=run,
    families=("matmul",),
    files=(
        "beyond/triton_matmul.py",
        "beyond/__init__.py",
        "experiments/b13_triton_matmul.py",
    ),
    notes={
        "tf32_small": _share(
            "Triton TF32 在 4096³ 时达到 cuBLAS TF32 的",
            "Triton TF32 at 4096³, share of cuBLAS TF32",
        ),
        "tf32_big": _share(
            "Triton TF32 在 8192³ 时达到 cuBLAS TF32 的",
            "Triton TF32 at 8192³, share of cuBLAS TF32",
        ),
        "tf32_2byte_big": _share(
            "用 fp16 的分块表调优时，Triton TF32 在 8192³ 达到 cuBLAS TF32 的",
            "Triton TF32 tuned over fp16's tiles, 8192³, share of cuBLAS TF32",
        ),
        "tf32_kmajor_small": _share(
            "B 按 K 连续存放时，Triton TF32 在 4096³ 达到 cuBLAS TF32 的",
            "Triton TF32 with B K-major, 4096³, share of cuBLAS TF32",
        ),
        "tf32_kmajor_big": _share(
            "B 按 K 连续存放时，Triton TF32 在 8192³ 达到 cuBLAS TF32 的",
            "Triton TF32 with B K-major, 8192³, share of cuBLAS TF32",
        ),
        "tf32_over_v8_big": Note(
            "Triton TF32 的速度是 CUDA C v8 的（倍，8192³）",
            "Triton TF32's speed over CUDA C v8's (times, 8192³)",
            "{:,.1f}×",
        ),
        "v8_big": _share(
            "CUDA C v8 在 8192³ 时达到 cuBLAS TF32 的",
            "CUDA C v8 at 8192³, share of cuBLAS TF32",
        ),
        "ieee_big": _share(
            "Triton 完整 float32 在 8192³ 时达到 cuBLAS fp32 的",
            "Triton full float32 at 8192³, share of cuBLAS fp32",
        ),
        "v7_big": _share(
            "CUDA C v7 在 8192³ 时达到 cuBLAS fp32 的",
            "CUDA C v7 at 8192³, share of cuBLAS fp32",
        ),
    },  # fmt: skip
    zh={
        "way": "实现",
        "TFLOP/s": "TFLOP/s",
        V7: "CUDA C v7 fp32",
        IEEE: "Triton fp32",
        CUBLAS32: "cuBLAS fp32",
        V8: "CUDA C v8 TF32",
        TF32_2B: "Triton TF32，用 fp16 的分块",
        TF32: "Triton TF32",
        TF32_KMAJOR: "Triton TF32，B 按 K 连续",
        CUBLAS_TF32: "cuBLAS TF32",
        **{f"{n}³": f"{n}³" for n in SIZES + QUICK_SIZES},
    },
)
