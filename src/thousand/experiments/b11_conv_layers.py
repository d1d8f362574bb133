"""B11: the convolution ladder on four layers of a ResNet-style network (a 3 x 3
layer, a strided 3 x 3, a 1 x 1 and a depthwise 3 x 3), each version against cuDNN
through PyTorch (TF32 off; v4 against TF32 on), and what im2col costs: the patch
matrix's bytes computed from the shape, then its kernel timed alone.
CUDA-event medians, L2 flushed; every output checked against cuDNN's first.
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import median, on_cpu, time_ms, to_device
from thousand.experiments import Experiment, Note
from thousand.kernels.conv import conv, conv_flops
from thousand.kernels.conv_geometry import ConvGeometry

# (N, H, W, C, R, S, F, stride, pad, dilation, groups)
LAYERS = {
    "3×3, 64→64, 56²": (32, 56, 56, 64, 3, 3, 64, 1, 1, 1, 1),
    "3×3 stride 2, 64→128": (32, 56, 56, 64, 3, 3, 128, 2, 1, 1, 1),
    "1×1, 256→64, 56²": (32, 56, 56, 256, 1, 1, 64, 1, 0, 1, 1),
    "depthwise 3×3, 256, 28²": (32, 28, 28, 256, 3, 3, 256, 1, 1, 1, 256),
}
QUICK_LAYERS = {  # the CPU backend: every option, a few tiles
    "3×3": (2, 9, 9, 8, 3, 3, 8, 1, 1, 1, 1),
    "depthwise": (1, 7, 7, 4, 3, 3, 4, 2, 1, 1, 4),
}
VERSIONS = {"v1 direct": 1, "v2 im2col + GEMM": 2, "v3 implicit GEMM": 3}
TC = "v4 implicit GEMM, TF32"
CUDNN, CUDNN_TF32 = "cuDNN fp32", "cuDNN TF32"
WAYS = [*VERSIONS, TC, CUDNN, CUDNN_TF32]


def _cudnn(X, K, geom, tf32: bool, warmup, repeat):
    """cuDNN's time and output on the same operands, NHWC as channels_last."""
    import torch

    x = torch.from_numpy(X).cuda().permute(0, 3, 1, 2)
    w = torch.from_numpy(K).cuda().permute(3, 2, 0, 1)
    w = w.contiguous(memory_format=torch.channels_last)
    kw = {"stride": geom.stride, "padding": geom.pad, "dilation": geom.dilation}
    kw["groups"] = geom.groups
    before = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = tf32
    try:

        def f():
            return torch.nn.functional.conv2d(x, w, **kw)

        y = f().permute(0, 2, 3, 1).cpu().numpy()
        return median(time_ms(f, warmup=warmup, repeat=repeat)), y
    finally:
        torch.backends.cudnn.allow_tf32 = before


def run(quick: bool) -> dict:
    layers = QUICK_LAYERS if quick else LAYERS
    warmup, repeat = (1, 2) if quick else (3, 10)
    rates = {}
    for name, size in layers.items():
        rng = np.random.default_rng(0)
        N, H, W, C, R, S, F, *g = size
        geom = ConvGeometry(*g)
        X = rng.standard_normal((N, H, W, C), dtype=np.float32)
        K = rng.standard_normal((R, S, C // geom.groups, F), dtype=np.float32)
        dX, dK = to_device(X), to_device(K)
        dY = conv(dX, dK, geom, version=1)
        want = None if on_cpu() else _cudnn(X, K, geom, False, 0, 1)[1]
        row = []
        for way in WAYS:
            if way in (CUDNN, CUDNN_TF32):
                if on_cpu():
                    row.append(None)
                    continue
                ms = _cudnn(X, K, geom, way == CUDNN_TF32, warmup, repeat)[0]
            else:
                v = VERSIONS.get(way, 4)
                if v == 4 and on_cpu():  # tensor cores: GPU only
                    row.append(None)
                    continue

                def call(v=v, a=(dX, dK, geom), o=dY):
                    conv(*a, out=o, version=v)

                call()
                got = dY.get()
                ref = want if want is not None else conv(X, K, geom, version=1)
                err = np.abs(got - ref).max() / max(np.abs(ref).max(), 1.0)
                if not err < (5e-3 if v == 4 else 1e-4):
                    raise RuntimeError(f"b11-conv-layers: {way} at {name}: {err:.3g}")
                ms = median(time_ms(call, warmup=warmup, repeat=repeat))
            row.append(conv_flops(size) / ms / 1e9)
        rates[name] = row
    # the first layer is B11's benchmark layer, the last a depthwise one
    bench, depthwise = (rates[k] for k in (list(layers)[0], list(layers)[-1]))

    def share(row, way, lib=CUDNN):  # 0 where the library did not run (the CPU)
        mine, theirs = row[WAYS.index(way)], row[WAYS.index(lib)]
        return mine / theirs if mine and theirs else 0.0

    notes = traffic(layers[list(layers)[0]], warmup, repeat) | {
        "v3_of_cudnn": share(bench, "v3 implicit GEMM"),
        "v2_of_cudnn": share(bench, "v2 im2col + GEMM"),
        "v4_of_cudnn_tf32": share(bench, TC, CUDNN_TF32),
        "depthwise_v1_of_cudnn": share(depthwise, "v1 direct"),
    }
    return {
        "kind": "bars",
        "x": {"label": "version", "values": WAYS},
        # log: the depthwise layer runs two orders of magnitude below the others
        "y": {"label": "TFLOP/s", "format": "{:,.3g}", "log": True},
        "series": {k: list(v) for k, v in rates.items()},
        "notes": notes,
    }


def traffic(size, warmup, repeat) -> dict:
    """im2col's cost at B11's layer: bytes from the shape, then the kernel alone."""
    from thousand.cuda import cdiv, launch
    from thousand.kernels.conv import ints
    from thousand.kernels.layer_launch import scratch

    N, H, W, C, R, S, F, *g = size
    geom = ConvGeometry(*g)
    P, Q = geom.output_hw(H, W, R, S)
    x_bytes = 4 * N * H * W * C
    cols_bytes = 4 * N * P * Q * R * S * C
    dX = to_device(np.ones((N, H, W, C), np.float32))
    cols = scratch("conv", "cols", (cols_bytes // 4,))
    args = ints((N, H, W, C, R, S, F), geom)

    def im2col():
        launch(
            "conv",
            "conv_v2",
            (cdiv(cols.size, 256),),
            (256,),
            dX,
            cols,
            np.int32(cols.size),
            *args,
        )

    ms = median(time_ms(im2col, warmup=warmup, repeat=repeat))
    return {
        "patches_over_input": cols_bytes / x_bytes,
        "patch_mib": cols_bytes / 2**20,
        "im2col_ms": ms,
        "im2col_gbs": (x_bytes + cols_bytes) / ms / 1e6,  # its fewest bytes
    }


def _share(zh, en):
    return Note(zh, en, "{:.0%}")


EXPERIMENT = Experiment(
    name="b11-conv-layers",
    title={
        "zh": "四种卷积层上的卷积阶梯：直接法、im2col + GEMM、隐式 GEMM、张量核心，"
        "与 cuDNN 对比",
        "en": "The convolution ladder on four layers: direct, im2col + GEMM, implicit "
        "GEMM, tensor cores, against cuDNN",
    },
    run=run,
    families=("conv",),
    notes={
        "v3_of_cudnn": _share(
            "隐式 GEMM（v3）达到 cuDNN（fp32）的",
            "implicit GEMM (v3), share of cuDNN fp32",
        ),
        "v2_of_cudnn": _share(
            "im2col + GEMM（v2）达到 cuDNN（fp32）的",
            "im2col + GEMM (v2), share of cuDNN fp32",
        ),
        "v4_of_cudnn_tf32": _share(
            "张量核心（v4）达到 cuDNN（TF32）的",
            "tensor cores (v4), share of cuDNN TF32",
        ),
        "depthwise_v1_of_cudnn": _share(
            "逐通道卷积：直接法（v1）达到 cuDNN 的",
            "depthwise: direct (v1), share of cuDNN",
        ),
        "patches_over_input": Note(
            "展开矩阵与输入之比（字节）", "patch matrix over input (bytes)", "{:.1f}×"
        ),
        "patch_mib": Note("展开矩阵大小 (MiB)", "patch matrix size (MiB)", "{:,.0f}"),
        "im2col_ms": Note(
            "im2col 核函数单独的耗时 (ms)", "im2col kernel alone (ms)", "{:.3f}"
        ),
        "im2col_gbs": Note(
            "im2col 核函数的有效带宽 (GB/s)", "im2col kernel, effective GB/s", "{:,.0f}"
        ),
    },
    zh={
        "version": "版本",
        "TFLOP/s": "TFLOP/s",
        "v1 direct": "v1 直接法",
        "v2 im2col + GEMM": "v2 im2col + GEMM",
        "v3 implicit GEMM": "v3 隐式 GEMM",
        TC: "v4 隐式 GEMM，TF32",
        CUDNN: "cuDNN fp32",
        CUDNN_TF32: "cuDNN TF32",
        "3×3, 64→64, 56²": "3×3，64→64，56²",
        "3×3 stride 2, 64→128": "3×3 步长 2，64→128",
        "1×1, 256→64, 56²": "1×1，256→64，56²",
        "depthwise 3×3, 256, 28²": "逐通道 3×3，256，28²",
        "3×3": "3×3",
        "depthwise": "逐通道",
    },
)
