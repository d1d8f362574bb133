"""B13: the Triton matmul ladder in 2-byte floats against cuBLAS. For float16 and
bfloat16 operands (float32 accumulation) at 4096^3 and 8192^3: Triton v1 (a tile
per program, row-major order), v2 (grouped order), v3 (autotuned) and cuBLAS
through torch.matmul, all on the same operands, each a CUDA-event median with L2
flushed between repeats; TFLOP/s = 2 M N K / time. b13-triton-fp32 does float32.
"""

from __future__ import annotations

import contextlib

from thousand.cuda import median, on_cpu, time_ms
from thousand.experiments import Experiment, Note

SIZES = [4096, 8192]
QUICK_SIZES = [48, 80]  # Triton's interpreter on the CPU: ragged, a tile or two
WAYS = ["Triton v1", "Triton v2", "Triton v3", "cuBLAS"]
DTYPES = {"fp16": "float16", "bf16": "bfloat16"}


def operands(n: int, dtype, seed: int = 0):
    """Two n x n matrices of standard normals rounded to `dtype`, where the
    kernels run (the interpreter's are on the CPU)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    device = "cpu" if on_cpu() else "cuda"
    a, b = (torch.randn(n, n, generator=g) for _ in range(2))
    return a.to(device, dtype), b.to(device, dtype)


@contextlib.contextmanager
def cublas_tf32(on: bool):
    """torch.matmul of float32 through cuBLAS with TF32 on or off, restored after."""
    import torch

    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = on
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before


def tflops(call, n: int, quick: bool) -> float:
    """TFLOP/s of call() (an n^3 product): the median of CUDA-event times."""
    warmup, repeat = (1, 2) if quick else (3, 10)
    ms = median(time_ms(call, warmup=warmup, repeat=repeat))
    return 2 * n**3 / (ms * 1e-3) / 1e12


def calls(a, b) -> dict:
    """way -> a no-argument call that computes a @ b into one output."""
    import torch

    from thousand.beyond import triton_matmul as T

    c = torch.empty_like(a)
    found = {f"Triton v{v}": _rung(T, v, a, b, c) for v in T.VERSIONS}
    found["cuBLAS"] = lambda: torch.matmul(a, b, out=c)
    return found


def _rung(T, v, a, b, c):
    return lambda: T.matmul(a, b, c, version=v)


def run(quick: bool) -> dict:
    import torch

    from thousand.beyond import interpreted

    sizes = QUICK_SIZES if quick else SIZES
    series, labels = {}, []
    for short, name in DTYPES.items():
        dtype = getattr(torch, name)
        for n in sizes:
            label = f"{short} {n}³"
            labels.append(label)
            if interpreted() and dtype == torch.bfloat16:
                series[label] = [None] * len(WAYS)  # the interpreter refuses bf16
                continue
            found = calls(*operands(n, dtype))
            series[label] = [tflops(found[w], n, quick) for w in WAYS]
    s = series

    def share(label, way):  # that way's speed as a share of cuBLAS's
        row = s[label]
        if row[WAYS.index(way)] is None:
            return 0.0
        return row[WAYS.index(way)] / row[WAYS.index("cuBLAS")]

    big, small = (f"{{}} {n}³" for n in (sizes[-1], sizes[0]))
    return {
        "kind": "bars",
        "x": {"label": "way", "values": WAYS},
        "y": {"label": "TFLOP/s", "format": "{:,.0f}"},
        "series": {k: [s[k][i] for i in range(len(WAYS))] for k in labels},
        "notes": {
            "v1_fp16_big": share(big.format("fp16"), "Triton v1"),
            "v2_fp16_big": share(big.format("fp16"), "Triton v2"),
            "v3_fp16_small": share(small.format("fp16"), "Triton v3"),
            "v3_fp16_big": share(big.format("fp16"), "Triton v3"),
            "v3_bf16_small": share(small.format("bf16"), "Triton v3"),
            "v3_bf16_big": share(big.format("bf16"), "Triton v3"),
            "cublas_fp16_big": s[big.format("fp16")][WAYS.index("cuBLAS")],
        },
    }


def _share(zh, en):
    return Note(zh, en, "{:.0%}")


EXPERIMENT = Experiment(
    name="b13-triton-matmul",
    title={
        "zh": "Triton 矩阵乘法三级阶梯与 cuBLAS：fp16 与 bf16（float32 累加）",
        "en": "The Triton matmul ladder against cuBLAS: fp16 and bf16 "
        "(float32 accumulation)",
    },
    run=run,
    files=("beyond/triton_matmul.py", "beyond/__init__.py"),
    notes={
        "v1_fp16_big": _share(
            "v1 在 fp16、8192³ 时达到 cuBLAS 的",
            "v1 at fp16, 8192³, as a share of cuBLAS",
        ),
        "v2_fp16_big": _share(
            "v2（分组顺序）在 fp16、8192³ 时达到 cuBLAS 的",
            "v2 (grouped order) at fp16, 8192³, share of cuBLAS",
        ),
        "v3_fp16_small": _share(
            "v3（自动调优）在 fp16、4096³ 时达到 cuBLAS 的",
            "v3 (autotuned) at fp16, 4096³, share of cuBLAS",
        ),
        "v3_fp16_big": _share(
            "v3 在 fp16、8192³ 时达到 cuBLAS 的", "v3 at fp16, 8192³, share of cuBLAS"
        ),
        "v3_bf16_small": _share(
            "v3 在 bf16、4096³ 时达到 cuBLAS 的", "v3 at bf16, 4096³, share of cuBLAS"
        ),
        "v3_bf16_big": _share(
            "v3 在 bf16、8192³ 时达到 cuBLAS 的", "v3 at bf16, 8192³, share of cuBLAS"
        ),
        "cublas_fp16_big": Note(
            "cuBLAS 在 fp16、8192³ 时的 TFLOP/s",
            "cuBLAS at fp16, 8192³, in TFLOP/s",
            "{:,.0f}",
        ),
    },  # fmt: skip
    zh={
        "way": "实现",
        "TFLOP/s": "TFLOP/s",
        "Triton v1": "Triton v1",
        "Triton v2": "Triton v2",
        "Triton v3": "Triton v3",
        "cuBLAS": "cuBLAS",
        **{f"{d} {n}³": f"{d} {n}³" for d in DTYPES for n in SIZES + QUICK_SIZES},
    },
)
