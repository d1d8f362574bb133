"""B14: the cuTile matmul's tile shape, swept. C = A B in float16 (float32 sums) at
4096^3 and 8192^3 with one cuTile kernel (thousand.beyond.cutile_kernels.matmul)
and six tile shapes (tm x tn x tk: C's tile and the K step), against cuBLAS
(torch.matmul on the same float16 operands) in the same run. 128 x 256 x 64 is the
default of NVIDIA's matmul sample for 2-byte operands. Each time is a CUDA-event
median with L2 flushed between repeats; TFLOP/s = 2 M N K / time. Before it is
timed, each tile's product is checked against cuBLAS's.

b14-cutile-ops compares the batched product, the convolution and TF32 with
PyTorch and with this package's CUDA C.
"""

from __future__ import annotations

from thousand.cuda import median, time_ms
from thousand.experiments import Experiment, Note

WHY = (
    "cuTile Python needs an NVIDIA GPU (compute capability 9.0 here) and CUDA "
    "13.4's tileiras"
)
TILES = [
    (64, 64, 32),
    (64, 128, 64),
    (128, 64, 64),
    (128, 128, 64),
    (128, 256, 64),
    (256, 128, 64),
]
SAMPLE = (128, 256, 64)  # NVIDIA's samples/MatMul.py for 2-byte operands
SIZES = [4096, 8192]
QUICK_SIZES = [1024]  # a smoke run on a GPU
CUBLAS = "cuBLAS (torch.matmul)"
XLABEL = "cuTile tile (tm×tn×tk), or cuBLAS"
CHECK = 1e-2  # of max |C|: two float16 roundings apart; a wrong tile is off by ~1


def label(tile) -> str:
    return "×".join(map(str, tile))


def operands(n: int):
    """Two n x n float16 matrices of standard normals, on the GPU."""
    import torch

    g = torch.Generator().manual_seed(n)
    a, b = (torch.randn(n, n, generator=g) for _ in range(2))
    return a.to("cuda", torch.float16), b.to("cuda", torch.float16)


def tflops(call, n: int, quick: bool) -> float:
    warmup, repeat = (1, 3) if quick else (2, 10)
    ms = median(time_ms(call, warmup=warmup, repeat=repeat))
    return 2 * n**3 / (ms * 1e-3) / 1e12


def measure(n: int, quick: bool) -> list[float]:
    """TFLOP/s of each tile of TILES, then of cuBLAS, at n^3."""
    import torch

    from thousand.beyond import cutile_kernels as T

    a, b = operands(n)
    c, ref = torch.empty_like(a), torch.empty_like(a)
    torch.matmul(a, b, out=ref)
    found = []
    for tile in TILES:
        T.matmul(a, b, out=c, tile=tile)
        err = T.relative_error(c, ref)
        if not err < CHECK:
            raise AssertionError(
                f"cuTile matmul with tile {label(tile)} at {n}^3 is off cuBLAS by "
                f"{err:.1e} of max |C| (allowed {CHECK})"
            )
        found.append(tflops(lambda t=tile: T.matmul(a, b, out=c, tile=t), n, quick))
    found.append(tflops(lambda: torch.matmul(a, b, out=c), n, quick))
    return found


def run(quick: bool) -> dict:
    from thousand.beyond.cutile_kernels import cutile

    cutile()  # stops here, saying what is missing, where cuTile cannot run
    sizes = QUICK_SIZES if quick else SIZES
    xs = [label(t) for t in TILES] + [CUBLAS]
    series = {f"{n}³": measure(n, quick) for n in sizes}

    def share(n, tile):
        row = series[f"{n}³"]
        return row[TILES.index(tile)] / row[-1]

    def best(n):
        return max(series[f"{n}³"][: len(TILES)]) / series[f"{n}³"][-1]

    small, big = sizes[0], sizes[-1]
    ours = series[f"{big}³"][: len(TILES)]
    return {
        "kind": "bars",
        "x": {"label": XLABEL, "values": xs},
        "y": {"label": "TFLOP/s", "format": "{:,.0f}"},
        "series": series,
        "notes": {
            "best_small": best(small),
            "best_big": best(big),
            "sample_small": share(small, SAMPLE),
            "sample_big": share(big, SAMPLE),
            "tile_128_small": share(small, (128, 128, 64)),
            "tile_128_big": share(big, (128, 128, 64)),
            "spread_big": max(ours) / min(ours),
            "cublas_big": series[f"{big}³"][-1],
        },
    }


def _share(zh, en):
    return Note(zh, en, "{:.0%}")


EXPERIMENT = Experiment(
    name="b14-cutile",
    title={
        "zh": "cuTile 矩阵乘法的分块形状与 cuBLAS：fp16（float32 累加），"
        "4096³ 与 8192³",
        "en": "The cuTile matmul's tile shape against cuBLAS: fp16 (float32 "
        "accumulation), 4096³ and 8192³",
    },
    run=run,
    files=("beyond/cutile_kernels.py",),
    gpu_only=WHY,
    notes={
        "best_small": _share(
            "4096³ 时最好的分块达到 cuBLAS 的",
            "Best tile at 4096³, as a share of cuBLAS",
        ),
        "best_big": _share(
            "8192³ 时最好的分块达到 cuBLAS 的",
            "Best tile at 8192³, as a share of cuBLAS",
        ),
        "sample_small": _share(
            "官方示例的默认分块 128×256×64 在 4096³ 时达到 cuBLAS 的",
            "The official sample's default tile, 128×256×64, at 4096³: share of cuBLAS",
        ),
        "sample_big": _share(
            "官方示例的默认分块 128×256×64 在 8192³ 时达到 cuBLAS 的",
            "The sample's default tile, 128×256×64, at 8192³: share of cuBLAS",
        ),
        "tile_128_small": _share(
            "128×128×64 在 4096³ 时达到 cuBLAS 的",
            "128×128×64 at 4096³, share of cuBLAS",
        ),
        "tile_128_big": _share(
            "128×128×64 在 8192³ 时达到 cuBLAS 的",
            "128×128×64 at 8192³, share of cuBLAS",
        ),
        "spread_big": Note(
            "8192³ 时最快与最慢分块之比（倍）",
            "Fastest tile over slowest at 8192³ (times)",
            "{:,.1f}×",
        ),
        "cublas_big": Note(
            "cuBLAS 在 8192³ 时的 TFLOP/s",
            "cuBLAS at 8192³, in TFLOP/s",
            "{:,.0f}",
        ),
    },
    zh={
        XLABEL: "cuTile 分块（tm×tn×tk），或 cuBLAS",
        "TFLOP/s": "TFLOP/s",
        CUBLAS: "cuBLAS（torch.matmul）",
        **{label(t): label(t) for t in TILES},
        **{f"{n}³": f"{n}³" for n in SIZES + QUICK_SIZES},
    },
)
