"""B6: useful bandwidth of a strided gather, out[i] = x[i * stride], over the stride.

Each output is 4 useful bytes read and 4 written. A warp's 32 loads are 4 * stride
bytes apart, and memory moves whole 32-byte sectors, so from stride 8 on every load
brings a sector of its own for 4 useful bytes. The model series is what the stride-1
rate becomes if only the touched sectors cross the memory bus:

    useful rate(s) = rate(1) * 8 / (sector bytes read per output + 4)

At n = 2^24 one launch takes tens of microseconds, no more than the Python in front
of it, so each timed call issues BATCH launches through thousand.cuda.launch (no
argument checks or staging): the GPU runs one while Python issues the next. Every
array is far larger than L2, so a launch finds little of the previous one there.
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import cdiv, empty, launch, median, time_ms
from thousand.experiments import Experiment, Note
from thousand.kernels.strided import OP, strided_ref, strided_v1

STRIDES = [1, 2, 3, 4, 5, 8, 16, 32, 64]
SECTOR = 32  # bytes
WARP = 32
BLOCK = 256


def sectors_per_warp(stride: int, itemsize: int = 4) -> int:
    """32-byte sectors that one warp's 32 loads touch, from a sector-aligned start."""
    offsets = np.arange(WARP) * stride * itemsize
    return len(np.unique(offsets // SECTOR))


def sector_efficiency(stride: int) -> float:
    """Useful bytes over the bytes of the sectors moved for them."""
    return WARP * 4 / (sectors_per_warp(stride) * SECTOR)


def check(n: int) -> None:
    """Every stride against NumPy, on inputs whose every element has its own bits."""
    x = np.arange((n - 1) * max(STRIDES) + 1, dtype=np.uint32).view(np.float32)
    for s in STRIDES:
        got = strided_v1(x, stride=s, n=n)
        if not np.array_equal(
            got.view(np.uint32), strided_ref(x, s, n).view(np.uint32)
        ):
            raise AssertionError(f"strided_v1 at stride {s} disagrees with NumPy")


def run(quick: bool) -> dict:
    n, batch, repeat = (2**12, 2, 2) if quick else (2**24, 10, 20)
    check(2**10 if quick else 2**16)
    # One input serves every stride: (n - 1) * 64 + 1 floats, 4 GiB at n = 2^24.
    # Its values do not matter for the time; check() above tested correctness.
    dx = empty(((n - 1) * max(STRIDES) + 1,))
    d_out = empty((n,))
    measured = []
    for s in STRIDES:

        def launches(s=s):
            for _ in range(batch):
                launch(
                    OP,
                    "strided_v1",
                    (cdiv(n, BLOCK),),
                    (BLOCK,),
                    dx,
                    d_out,
                    np.int32(n),
                    np.int32(s),
                )

        ms = median(time_ms(launches, warmup=1, repeat=repeat)) / batch
        measured.append(8 * n / ms / 1e6)  # useful bytes: 4 read + 4 written
    model = [
        measured[0] * 8 / (sectors_per_warp(s) * SECTOR / WARP + 4) for s in STRIDES
    ]
    at = dict(zip(STRIDES, measured, strict=True))
    return {
        "kind": "lines",
        "x": {"label": "stride (floats)", "values": STRIDES, "log": True},
        "y": {"label": "useful GB/s", "format": "{:,.0f}"},
        "series": {"measured": measured, "32-byte sector model": model},
        "notes": {
            "n": n,
            "slowdown_8": at[1] / at[8],
            "slowdown_64": at[1] / at[64],
            "efficiency_8": 100 * sector_efficiency(8),
        },
    }


EXPERIMENT = Experiment(
    name="b6-strides",
    title={
        "zh": "跨步读取 out[i] = x[i × stride] 的有效带宽随步长的变化",
        "en": "Useful bandwidth of the strided gather out[i] = x[i * stride]",
    },
    run=run,
    families=("strided",),
    notes={
        "n": Note("输出元素个数 n", "outputs n", "{:,.0f}"),
        "slowdown_8": Note("步长 1 比步长 8 快", "stride 1 over stride 8", "{:.1f}×"),
        "slowdown_64": Note(
            "步长 1 比步长 64 快", "stride 1 over stride 64", "{:.1f}×"
        ),
        "efficiency_8": Note(
            "步长 ≥ 8 时每个 32 字节扇区里有用的字节",
            "useful bytes of each 32-byte sector from stride 8 on",
            "{:.1f}%",
        ),
    },
    zh={
        "stride (floats)": "步长（float 个数）",
        "useful GB/s": "有效带宽 (GB/s)",
        "measured": "实测",
        "32-byte sector model": "32 字节扇区模型",
    },
)
