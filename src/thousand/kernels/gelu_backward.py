"""The backward pass of GELU (tanh form): dx = dy * gelu'(x), from the forward's
input x. With t = tanh(u), u = sqrt(2/pi) (x + 0.044715 x^3):

    gelu'(x) = 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2)

(the product rule on 0.5 x (1 + t), and tanh' = 1 - tanh^2). This is what
autograd runs for gelu(x, approximate="tanh"): torch.ops.aten.gelu_backward.

    dx = gelu_backward(dy, x)    # 1-D float32, the same length
    gelu_backward(dy, x, out=dy) # in place over dy

python -m thousand.kernels.gelu_backward
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import cdiv, grid_stride_blocks, launch_1d
from thousand.kernels.family import Family, Version, pick
from thousand.kernels.gelu import A, K
from thousand.kernels.gelu import make_inputs as forward_inputs

OP = "gelu_backward"


# --8<-- [start:ref]
def gelu_grad_ref(x: np.ndarray) -> np.ndarray:
    """gelu'(x) in float64 (tests/cpu/test_gelu.py checks it by differences)."""
    x64 = np.asarray(x, dtype=np.float64)
    t = np.tanh(K * (x64 + A * x64**3))
    return 0.5 * (1 + t) + 0.5 * x64 * (1 - t * t) * K * (1 + 3 * A * x64 * x64)


def gelu_backward_ref(dy: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dy * gelu'(x) in float64, rounded once to float32."""
    return (np.asarray(dy, np.float64) * gelu_grad_ref(x)).astype(np.float32)


# --8<-- [end:ref]


# --8<-- [start:launchers]
def gelu_backward_v1(dy, x, out=None, block=256):
    """One element per thread and step of a grid-stride loop."""
    return launch_1d(
        OP,
        "gelu_backward_v1",
        {"dy": dy, "x": x},
        out,
        block,
        grid_for=lambda n: grid_stride_blocks(block, n),
    )


def gelu_backward_v2(dy, x, out=None, block=256):
    """Four elements per thread and step, as float4: arrays 16-byte aligned."""
    return launch_1d(
        OP,
        "gelu_backward_v2",
        {"dy": dy, "x": x},
        out,
        block,
        grid_for=lambda n: grid_stride_blocks(block, cdiv(n, 4)),
        align=16,
    )


# --8<-- [end:launchers]


def gelu_backward(dy, x, out=None, version=2, block=256):
    """dL/dx of y = gelu(x) for dL/dy = dy; both 1-D float32 of one length."""
    return pick(FAMILY, version)(dy, x, out=out, block=block)


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    (x,) = forward_inputs(rng, size)  # the forward's awkward values
    dy = rng.standard_normal(size[0], dtype=np.float32)
    return dy, x


def typical_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    return (
        rng.standard_normal(size[0], dtype=np.float32),
        rng.standard_normal(size[0], dtype=np.float32),
    )


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "gelu_backward_v1",
            "the derivative per element, in a grid-stride loop",
            gelu_backward_v1,
            blocks=(32, 256, 1024),
        ),
        Version(
            2,
            "gelu_backward_v2",
            "float4 loads of dy and x, float4 stores of dx, a scalar tail",
            gelu_backward_v2,
            blocks=(32, 256, 1024),
        ),
    ),
    ref=gelu_backward_ref,
    make_inputs=make_inputs,
    typical_inputs=typical_inputs,
    check_sizes=((1,), (3,), (7,), (1000,), (1021,), (4099,), (65537,), (2_500_003,)),
    bench_size=(2**28,),  # gelu's: GPT-2 medium's (B*T, 4C) for 65,536 tokens
    bytes_moved=lambda size: 3 * 4 * size[0],  # read dy and x, write dx
    # Relative to max(|dx|, 1). The term 0.5 x (1 - t^2) du/dx dominates: near
    # saturation (x around -4) t is within a few ulp of -1, so 1 - t^2 keeps only
    # the absolute error of t (6e-8), multiplied by |0.5 x du/dx| ~ 8 (torch's
    # float32 formula is the same). At most 4.7e-7 on the CPU backend (every check
    # size the CPU layer runs, both versions, every block, 3 seeds); the GPU's
    # tanhf is within 2 ulp where glibc's is within 1: twice that, and twice again.
    tolerance=2e-6,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
