"""B9 on Hopper: the wgmma rungs (TMA, mbarriers, warpgroup MMA) in TF32 and bf16
against cuBLAS at the same precision, at 4096^3 and 8192^3, beside v8 (mma.sync,
TF32); and a picture, from the GPU, of which thread holds each element of a
warpgroup's accumulator. C = A B^T with B given K-major (N x K) for wgmma and
cuBLAS alike; v8 multiplies the row-major B. CUDA-event medians, L2 flushed.
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import generated_source, launch, median, time_ms, to_device
from thousand.experiments import Experiment, Note

SIZES = [4096, 8192]
V8 = "mma.sync TF32 (v8)"
TF32 = ["wgmma TF32 v1", "wgmma TF32 v2"]
CUBLAS_TF32 = "cuBLAS TF32"
BF16 = ["wgmma bf16 v1", "wgmma bf16 v2"]
CUBLAS_BF16 = "cuBLAS bf16"
WAYS = [V8, *TF32, CUBLAS_TF32, *BF16, CUBLAS_BF16]
OWNER_COLS = 32  # of the 64 x 128 accumulator, the columns the picture shows

OWNERS = r"""
#include "wgmma_gemm.cuh"
// Each thread of a warpgroup writes its own number where its accumulators go.
extern "C" __global__ void owners(float* C) {
    float d[64];
    for (int i = 0; i < 64; ++i) d[i] = threadIdx.x;
    store_tile(d, C, 0, 0, 64, 128);
}
"""


def owners() -> np.ndarray:
    """64 x 128: the thread (0-127) holding each element of an m64n128 tile."""
    path = generated_source("matmul_wgmma-owners", OWNERS)
    out = to_device(np.full((64, 128), -1, np.float32))
    launch(path, "owners", (1,), (128,), out)
    return out.get()


def calls(n: int) -> dict:
    """way -> a no-argument call computing one n^3 product (same operands for all;
    each output made once)."""
    import torch

    from thousand.kernels.matmul import matmul
    from thousand.kernels.matmul_wgmma import BF16 as bf16
    from thousand.kernels.matmul_wgmma import matmul_wgmma
    from thousand.kernels.matmul_wgmma_tf32 import matmul_wgmma_tf32

    rng = np.random.default_rng(0)
    a, bt = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    b = np.ascontiguousarray(bt.T)  # the row-major B that v8 takes
    d = {k: to_device(x) for k, x in (("a", a), ("bt", bt), ("b", b))}
    d16 = {k: to_device(x.astype(bf16)) for k, x in (("a", a), ("bt", bt))}
    c32, c16 = to_device(a * 0), to_device(a.astype(bf16) * 0)
    ta, tbt = torch.from_numpy(a).cuda(), torch.from_numpy(bt).cuda()
    ta16, tbt16 = ta.bfloat16(), tbt.bfloat16()
    tc, tc16 = torch.empty_like(ta), torch.empty_like(ta16)

    def cublas_tf32():
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            torch.matmul(ta, tbt.T, out=tc)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = False

    found = {
        V8: lambda: matmul(d["a"], d["b"], out=c32, version=8),
        CUBLAS_TF32: cublas_tf32,
        CUBLAS_BF16: lambda: torch.matmul(ta16, tbt16.T, out=tc16),
    }
    for v, way in enumerate(TF32, 1):
        found[way] = lambda v=v: matmul_wgmma_tf32(d["a"], d["bt"], out=c32, version=v)
    for v, way in enumerate(BF16, 1):
        found[way] = lambda v=v: matmul_wgmma(d16["a"], d16["bt"], out=c16, version=v)
    return found


def run(quick: bool) -> dict:
    series = {}
    for n in SIZES:
        found = calls(n)
        series[f"{n}³"] = [
            2 * n**3 / median(time_ms(found[w], warmup=3, repeat=10)) / 1e9
            for w in WAYS
        ]

    def share(way, base, n):
        row = series[f"{n}³"]
        return row[WAYS.index(way)] / row[WAYS.index(base)]

    small, big = SIZES
    who = owners()[:, :OWNER_COLS]
    return {
        "kind": "bars",
        "x": {"label": "way", "values": WAYS},
        "y": {"label": "TFLOP/s", "format": "{:,.0f}"},
        "series": series,
        "notes": {
            "tf32_v2_small": share(TF32[1], CUBLAS_TF32, small),
            "tf32_v2_big": share(TF32[1], CUBLAS_TF32, big),
            "tf32_v1_big": share(TF32[0], CUBLAS_TF32, big),
            "bf16_v2_small": share(BF16[1], CUBLAS_BF16, small),
            "bf16_v2_big": share(BF16[1], CUBLAS_BF16, big),
            "bf16_v1_big": share(BF16[0], CUBLAS_BF16, big),
            "v8_big": share(V8, CUBLAS_TF32, big),
            "tf32_v2_over_v8": share(TF32[1], V8, big),
        },
        "images": {
            "label": f"which of the warpgroup's 128 threads holds each element of "
            f"its 64 x 128 accumulator (columns 0-{OWNER_COLS - 1}), as the GPU "
            "wrote it: warp w owns rows 16w to 16w + 15",
            "shape": list(who.shape),
            "values": [who.ravel().tolist()],
        },
    }


def _share(zh, en):
    return Note(zh, en, "{:.0%}")


EXPERIMENT = Experiment(
    name="b9-wgmma",
    title={
        "zh": "Hopper 的 wgmma：TF32 与 bf16 矩阵乘法对比 cuBLAS",
        "en": "Hopper's wgmma: TF32 and bf16 matmul against cuBLAS",
    },
    run=run,
    families=("matmul", "matmul_wgmma", "matmul_wgmma_tf32"),
    gpu_only="wgmma and TMA are sm_90a instructions (H100, H200)",
    notes={
        "tf32_v2_small": _share(
            "wgmma TF32 v2 在 4096³ 达到 cuBLAS TF32 的",
            "wgmma TF32 v2 at 4096³, share of cuBLAS TF32",
        ),
        "tf32_v2_big": _share(
            "wgmma TF32 v2 在 8192³ 达到 cuBLAS TF32 的",
            "wgmma TF32 v2 at 8192³, share of cuBLAS TF32",
        ),
        "tf32_v1_big": _share(
            "wgmma TF32 v1 在 8192³ 达到 cuBLAS TF32 的",
            "wgmma TF32 v1 at 8192³, share of cuBLAS TF32",
        ),
        "bf16_v2_small": _share(
            "wgmma bf16 v2 在 4096³ 达到 cuBLAS bf16 的",
            "wgmma bf16 v2 at 4096³, share of cuBLAS bf16",
        ),
        "bf16_v2_big": _share(
            "wgmma bf16 v2 在 8192³ 达到 cuBLAS bf16 的",
            "wgmma bf16 v2 at 8192³, share of cuBLAS bf16",
        ),
        "bf16_v1_big": _share(
            "wgmma bf16 v1 在 8192³ 达到 cuBLAS bf16 的",
            "wgmma bf16 v1 at 8192³, share of cuBLAS bf16",
        ),
        "v8_big": _share(
            "mma.sync（v8）在 8192³ 达到 cuBLAS TF32 的",
            "mma.sync (v8) at 8192³, share of cuBLAS TF32",
        ),
        "tf32_v2_over_v8": Note(
            "wgmma TF32 v2 的速度是 v8 的（倍，8192³）",
            "wgmma TF32 v2's speed over v8's (times, 8192³)",
            "{:,.1f}×",
        ),
    },
    zh={
        "way": "实现",
        "TFLOP/s": "TFLOP/s",
        **{w: w for w in WAYS},
        **{f"{n}³": f"{n}³" for n in SIZES},
    },
)
