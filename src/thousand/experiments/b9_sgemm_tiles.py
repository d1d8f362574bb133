"""B9: sgemm's template (matmul_v7's warp tiling over a tile shape, with or without
the swizzle and the second buffer) instantiated at several shapes and timed against
cuBLAS float32 (TF32 off) at 4096^3 and 8192^3 on the same operands: the sweep
that chose sgemm_v2's shape, recorded with the run. CUDA-event medians, L2 flushed.
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import (
    cdiv,
    generated_source,
    launch,
    median,
    on_cpu,
    source_path,
    time_ms,
    to_device,
)
from thousand.experiments import Experiment, Note

SIZES = [4096, 8192]
QUICK_SIZES = [130]  # the CPU backend: ragged on every tile, a few blocks

# label -> warp_tiled's arguments: BM, BN, BK, WM, WN, TM, TN, NI, swizzle, 2 buffers
V7_SHAPE = "128×128, warps 64×32 (v7)"
V2 = "128×256, warps 64×64 (sgemm v2)"
SHAPES = {
    V7_SHAPE: (128, 128, 16, 64, 32, 8, 4, 2, False, False),
    "+ swizzle": (128, 128, 16, 64, 32, 8, 4, 2, True, False),
    "+ 2 buffers (sgemm v1)": (128, 128, 16, 64, 32, 8, 4, 2, True, True),
    "128×128, warps 64×64": (128, 128, 16, 64, 64, 8, 4, 4, True, True),
    "64×128, warps 32×64": (64, 128, 16, 32, 64, 8, 4, 2, True, True),
    "256×128, warps 128×32": (256, 128, 16, 128, 32, 8, 4, 2, True, True),
    "128×256, BK 8": (128, 256, 8, 64, 64, 8, 4, 4, True, True),
    "128×256, no swizzle": (128, 256, 16, 64, 64, 8, 4, 4, False, True),
    "128×256, 1 buffer": (128, 256, 16, 64, 64, 8, 4, 4, True, False),
    V2: (128, 256, 16, 64, 64, 8, 4, 4, True, True),
}
CUBLAS = "cuBLAS fp32"
WAYS = [*SHAPES, CUBLAS]


def threads(shape) -> int:
    bm, bn, _, wm, wn = shape[:5]
    return (bm // wm) * (bn // wn) * 32


def source():
    """sgemm.cu with one kernel per shape, tile_<i>, appended."""
    lines = [source_path("sgemm").read_text(), "// the sweep's shapes"]
    for i, shape in enumerate(SHAPES.values()):
        args = ", ".join(str(a).lower() for a in shape)
        lines.append(
            f'extern "C" __global__ void __launch_bounds__({threads(shape)})\n'
            f"tile_{i}(const float* A, const float* B, float* C, int M, int N, "
            f"int K) {{ warp_tiled<{args}>(A, B, C, M, N, K); }}"
        )
    return generated_source("sgemm-tiles", '#line 1 "sgemm.cu"\n' + "\n".join(lines))


def run(quick: bool) -> dict:
    sizes = QUICK_SIZES if quick else SIZES
    path = source()
    warmup, repeat = (1, 2) if quick else (3, 10)
    series = {}
    for n in sizes:
        rng = np.random.default_rng(0)
        a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
        da, db, dc = to_device(a), to_device(b), to_device(a * 0)
        ints = (np.int32(n),) * 3
        rates = []
        for i, shape in enumerate(SHAPES.values()):
            grid = (cdiv(n, shape[1]), cdiv(n, shape[0]))

            args = (da, db, dc, *ints)

            def call(i=i, grid=grid, shape=shape, args=args):
                launch(path, f"tile_{i}", grid, (threads(shape),), *args)

            call()
            err = np.abs(dc.get() - a.astype(np.float64) @ b).max() / n**0.5
            if not err < 1e-3:  # float32 sums of n products of standard normals
                raise RuntimeError(f"b9-sgemm-tiles: shape {i} is wrong ({err:.3g})")
            ms = median(time_ms(call, warmup=warmup, repeat=repeat))
            rates.append(2 * n**3 / ms / 1e9)
        rates.append(None if on_cpu() else cublas(a, b, warmup, repeat))
        series[f"{n}³"] = rates

    def share(way, n):
        row = series[f"{n}³"]
        lib = row[-1]
        return 0.0 if not lib else row[WAYS.index(way)] / lib

    small, big = sizes[0], sizes[-1]
    best = max(SHAPES, key=lambda w: series[f"{big}³"][WAYS.index(w)])
    return {
        "kind": "bars",
        "x": {"label": "tile shape", "values": WAYS},
        "y": {"label": "TFLOP/s", "format": "{:,.1f}"},
        "series": series,
        "notes": {
            "v2_small": share(V2, small),
            "v2_big": share(V2, big),
            "v7_shape_small": share(V7_SHAPE, small),
            "v7_shape_big": share(V7_SHAPE, big),
            "best_big": share(best, big),
            "v2_is_best": float(best == V2),
        },
    }


def cublas(a, b, warmup, repeat) -> float:
    """cuBLAS float32 with TF32 off, through torch.matmul, on the same operands."""
    import torch

    n = a.shape[0]
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    tc = torch.empty_like(ta)
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        ms = median(
            time_ms(lambda: torch.matmul(ta, tb, out=tc), warmup=warmup, repeat=repeat)
        )
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before
    return 2 * n**3 / ms / 1e9


def _share(zh, en):
    return Note(zh, en, "{:.0%}")


EXPERIMENT = Experiment(
    name="b9-sgemm-tiles",
    title={
        "zh": "CUDA 核心上的 float32 矩阵乘法：同一模板在不同分块形状下与 cuBLAS 对比",
        "en": "float32 matmul on CUDA cores: one template at several tile shapes, "
        "against cuBLAS",
    },
    run=run,
    families=("sgemm",),
    notes={
        "v2_small": _share(
            "sgemm v2 在 4096³ 达到 cuBLAS 的", "sgemm v2 at 4096³, share of cuBLAS"
        ),
        "v2_big": _share(
            "sgemm v2 在 8192³ 达到 cuBLAS 的", "sgemm v2 at 8192³, share of cuBLAS"
        ),
        "v7_shape_small": _share(
            "v7 的形状在 4096³ 达到 cuBLAS 的", "v7's shape at 4096³, share of cuBLAS"
        ),
        "v7_shape_big": _share(
            "v7 的形状在 8192³ 达到 cuBLAS 的", "v7's shape at 8192³, share of cuBLAS"
        ),
        "best_big": _share(
            "8192³ 时最快的形状达到 cuBLAS 的",
            "the fastest shape at 8192³, share of cuBLAS",
        ),
        "v2_is_best": Note(
            "sgemm v2 的形状是否为 8192³ 时最快（1 是，0 否）",
            "sgemm v2's shape the fastest at 8192³ (1 yes, 0 no)",
            "{:.0f}",
        ),
    },
    zh={
        V7_SHAPE: "128×128，线程束 64×32（v7）",
        "+ swizzle": "+ 重排",
        "+ 2 buffers (sgemm v1)": "+ 双缓冲（sgemm v1）",
        "128×128, warps 64×64": "128×128，线程束 64×64",
        "64×128, warps 32×64": "64×128，线程束 32×64",
        "256×128, warps 128×32": "256×128，线程束 128×32",
        "128×256, BK 8": "128×256，BK 8",
        "128×256, no swizzle": "128×256，不重排",
        "128×256, 1 buffer": "128×256，单缓冲",
        V2: "128×256，线程束 64×64（sgemm v2）",
        CUBLAS: "cuBLAS fp32",
        "tile shape": "分块形状",
        "TFLOP/s": "TFLOP/s",
        **{f"{n}³": f"{n}³" for n in SIZES + QUICK_SIZES},
    },
)
