"""GELU, GPT-2's activation, in the tanh form: y = 0.5 x (1 + tanh(u)),
u = sqrt(2/pi) (x + 0.044715 x^3) (Hendrycks & Gimpel 2016; GPT-2 and
torch.nn.functional.gelu(x, approximate="tanh") use this form).

    y = gelu(x)                  # x: 1-D float32; an MLP's (B*T, 4C) as x.reshape(-1)
    gelu(x, out=x)               # in place: each element is read before it is written

Like copy and sigmoid it takes the array flat: elementwise, the shape means nothing.

python -m thousand.kernels.gelu
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import cdiv, grid_stride_blocks, launch_1d
from thousand.kernels.family import Family, Version, pick

OP = "gelu"
K = np.sqrt(2 / np.pi)  # GELU_K in gelu.cuh, in float64
A = 0.044715


# --8<-- [start:ref]
def gelu_ref(x: np.ndarray) -> np.ndarray:
    """The tanh form in float64, rounded once to float32."""
    x64 = np.asarray(x, dtype=np.float64)
    return (0.5 * x64 * (1.0 + np.tanh(K * (x64 + A * x64**3)))).astype(np.float32)


# --8<-- [end:ref]


# --8<-- [start:launchers]
def gelu_v1(x, out=None, block=256):
    """One element per thread and step of a grid-stride loop."""
    return launch_1d(
        OP,
        "gelu_v1",
        {"x": x},
        out,
        block,
        grid_for=lambda n: grid_stride_blocks(block, n),
    )


def gelu_v2(x, out=None, block=256):
    """Four elements per thread and step, as float4: arrays 16-byte aligned."""
    return launch_1d(
        OP,
        "gelu_v2",
        {"x": x},
        out,
        block,
        grid_for=lambda n: grid_stride_blocks(block, cdiv(n, 4)),
        align=16,
    )


# --8<-- [end:launchers]


def gelu(x, out=None, version=2, block=256):
    """GELU (tanh form) of every element of the 1-D float32 array x."""
    return pick(FAMILY, version)(x, out=out, block=block)


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    (n,) = size
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    # Awkward values up front: zeros of both signs, a value too small to cube
    # (x^3 underflows to 0), the region near -3 where 1 + tanh(u) cancels, and
    # +-12, where tanhf(u) is exactly +-1 in float32.
    special = [0.0, -0.0, 1e-30, -3.0, -4.5, 12.0, -12.0, 1.0]
    x[: min(n, len(special))] = special[: min(n, len(special))]
    return (x,)


def typical_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    """What the benchmark times: pre-activations of unit scale, as an MLP's first
    matmul gives after layer norm."""
    return (rng.standard_normal(size[0], dtype=np.float32),)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "gelu_v1",
            "one element per thread, in a grid-stride loop",
            gelu_v1,
            blocks=(32, 256, 1024),
        ),
        Version(
            2,
            "gelu_v2",
            "float4 loads and stores, a scalar tail: the copy's speed",
            gelu_v2,
            blocks=(32, 256, 1024),
        ),
    ),
    ref=gelu_ref,
    make_inputs=make_inputs,
    typical_inputs=typical_inputs,
    # one element; fewer than a float4 (all tail); primes and ragged lengths (a
    # tail of 1, 2 or 3); a multiple of 4 (no tail); 2,500,003: v2 takes three
    # grid-stride steps on a 132-SM GPU (270,336 threads, four floats each)
    check_sizes=((1,), (3,), (7,), (1000,), (1021,), (4099,), (65537,), (2_500_003,)),
    # GPT-2 medium's MLP activation for 64 sequences of 1,024 tokens:
    # (B*T, 4C) = (65,536, 4,096) = 2^28 floats, 1 GiB each way: far past the L2,
    # and the size the copy kernel is timed at, so "% of copy" compares like sizes.
    bench_size=(2**28,),
    bytes_moved=lambda size: 2 * 4 * size[0],  # read x once, write y once
    # Relative to max(|y|, 1): tanhf (2 ulp on the GPU, 1 on glibc), the cube and
    # the products, each rounded in float32. At most 4.0e-8 on the CPU backend
    # (every check size the CPU layer runs, both versions, every block, 3 seeds);
    # the GPU's tanhf and fused multiply-adds round differently: 1e-6 is 25 times
    # that, the margin softmax keeps for expf.
    tolerance=1e-6,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
