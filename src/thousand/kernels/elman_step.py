"""elman_step: h_t = tanh(Gx + Gh), one step of Elman's network after its products.

python -m thousand.kernels.elman_step  # check every version, time it
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick

OP = "elman_step"


# --8<-- [start:ref]
def elman_step_ref(Gx, Gh):
    """In float64: Gx = x_t W_xh + b and Gh = h_{t-1} W_hh, both B x H."""
    return np.tanh(Gx.astype(np.float64) + Gh)


# --8<-- [end:ref]


def elman_step_v1(Gx, Gh, out=None, block=256):
    check_array(OP, "Gx", Gx, ndim=2)  # (B, H)
    check_array(OP, "Gh", Gh, ndim=2)
    check_shape(OP, "Gh", Gh, Gx.shape)
    if out is not None:
        check_array(OP, "out", out, ndim=2)
        check_shape(OP, "out", out, Gx.shape)
    check_block(OP, (block,))
    n = Gx.shape[0] * Gx.shape[1]
    stage = Staging(OP, Gx, Gh, names=("Gx", "Gh"))
    dGx, dGh = stage.inputs()
    d_out = stage.output(out, Gx.shape)
    if n:
        launch(OP, "elman_step_v1", (cdiv(n, block),), (block,), dGx, dGh, d_out,
               np.int32(n))  # fmt: skip
    return stage.result(d_out, out)


def elman_step(Gx, Gh, out=None, version=1, block=256):
    """h_t = tanh(Gx + Gh) with the chosen version."""
    return pick(FAMILY, version)(Gx, Gh, out=out, block=block)


def make_inputs(rng, size):
    B, H = size
    return (
        rng.standard_normal((B, H), dtype=np.float32),
        rng.standard_normal((B, H), dtype=np.float32),
    )


def numpy_baseline(Gx, Gh):
    o = np.empty_like(Gx)

    def run():
        np.add(Gx, Gh, out=o)
        return np.tanh(o, out=o)

    return run


def torch_baseline(Gx, Gh):
    import torch

    o = torch.empty_like(Gx)

    def run():
        torch.add(Gx, Gh, out=o)
        return torch.tanh_(o)

    return run


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "elman_step_v1",
            "one thread per element: the sum and the tanh in one pass",
            elman_step_v1,
            blocks=(32, 256, 1024),
        ),
    ),
    ref=elman_step_ref,
    make_inputs=make_inputs,
    check_sizes=((1, 1), (3, 7), (64, 129), (17, 1000), (257, 31)),
    bench_size=(64, 1024),
    bytes_moved=lambda size: 4 * 3 * size[0] * size[1],  # read Gx, Gh; write h
    tolerance=1e-6,  # tanhf within 2 ulp; the result lies in [-1, 1]
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
