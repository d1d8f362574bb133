"""lstm_cell_backward: the gradient of one LSTM step's pre-activations, one kernel.

python -m thousand.kernels.lstm_cell_backward  # check every version, time it
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick
from thousand.kernels.lstm_cell import lstm_cell_all_ref

OP = "lstm_cell_backward"


# --8<-- [start:ref]
def lstm_cell_backward_all_ref(dh, dc, acts, c_prev, c):
    """In float64: (dG, dc_prev), dG being the gradient of the four gates'
    pre-activations [i, f, g, o] and dc_prev that of c_{t-1}."""
    dh, dc = dh.astype(np.float64), dc.astype(np.float64)
    i, f, g, o = np.split(acts.astype(np.float64), 4, axis=1)
    tc = np.tanh(c.astype(np.float64))
    dct = dc + dh * o * (1 - tc**2)
    dG = np.concatenate(
        [
            dct * g * i * (1 - i),
            dct * c_prev * f * (1 - f),
            dct * i * (1 - g**2),
            dh * tc * o * (1 - o),
        ],
        axis=1,
    )
    return dG, dct * f


def lstm_cell_backward_ref(dh, dc, acts, c_prev, c):
    return lstm_cell_backward_all_ref(dh, dc, acts, c_prev, c)[0]


# --8<-- [end:ref]


def _shapes(dh, dc, acts, c_prev, c, out, dc_prev):
    check_array(OP, "dh", dh, ndim=2)  # (B, H)
    B, H = dh.shape
    if B > 65535:
        raise ValueError(f"{OP}: at most 65,535 rows (the grid's y), got B={B}")
    for arg, a, shape in (
        ("dc", dc, (B, H)),
        ("acts", acts, (B, 4 * H)),
        ("c_prev", c_prev, (B, H)),
        ("c", c, (B, H)),
    ):
        check_array(OP, arg, a, ndim=2)
        check_shape(OP, arg, a, shape)
    for arg, a, shape in (("out", out, (B, 4 * H)), ("dc_prev", dc_prev, (B, H))):
        if a is not None:
            check_array(OP, arg, a, ndim=2)
            check_shape(OP, arg, a, shape)
    return B, H


# --8<-- [start:launchers]
def lstm_cell_backward_v1(dh, dc, acts, c_prev, c, out=None, block=256, dc_prev=None):
    """Returns dG (B x 4H, into `out` if given); writes dc_{t-1} into `dc_prev` when
    given (an array of the inputs' kind)."""
    B, H = _shapes(dh, dc, acts, c_prev, c, out, dc_prev)
    check_block(OP, (block,))
    names = ("dh", "dc", "acts", "c_prev", "c")
    stage = Staging(OP, dh, dc, acts, c_prev, c, names=names)
    d_in = stage.inputs()
    d_dG = stage.output(out, (B, 4 * H))
    if dc_prev is not None:
        stage.named["out"] = out
    d_dcp = stage.output(dc_prev, (B, H), name="dc_prev")
    if B and H:
        grid = (cdiv(H, block), B)
        launch(OP, "lstm_cell_backward_v1", grid, (block,), *d_in, d_dG, d_dcp,
               np.int32(B), np.int32(H))  # fmt: skip
    if stage.on_host and dc_prev is not None:
        d_dcp.get(ary=dc_prev)
    return stage.result(d_dG, out)


# --8<-- [end:launchers]


def lstm_cell_backward(
    dh, dc, acts, c_prev, c, out=None, version=1, block=256, dc_prev=None
):
    """dG of one LSTM step; dc_{t-1} into `dc_prev`."""
    run = pick(FAMILY, version)
    return run(dh, dc, acts, c_prev, c, out=out, block=block, dc_prev=dc_prev)


def make_inputs(rng, size):
    """Activations from a real forward step, so that i, f, o lie in (0, 1)."""
    B, H = size
    Gx = rng.standard_normal((B, 4 * H), dtype=np.float32)
    Gh = rng.standard_normal((B, 4 * H), dtype=np.float32)
    c_prev = rng.standard_normal((B, H), dtype=np.float32)
    _, c, acts = lstm_cell_all_ref(Gx, Gh, c_prev)
    return (
        rng.standard_normal((B, H), dtype=np.float32),
        rng.standard_normal((B, H), dtype=np.float32),
        acts.astype(np.float32),
        c_prev,
        c.astype(np.float32),
    )


def numpy_baseline(dh, dc, acts, c_prev, c):
    """The same step in NumPy float32, into an output made once."""
    H = dh.shape[1]
    dG = np.empty_like(acts)

    def run():
        i, f, g, o = (acts[:, k * H : (k + 1) * H] for k in range(4))
        tc = np.tanh(c)
        dct = dc + dh * o * (1 - tc * tc)
        dG[:, :H] = dct * g * i * (1 - i)
        dG[:, H : 2 * H] = dct * c_prev * f * (1 - f)
        dG[:, 2 * H : 3 * H] = dct * i * (1 - g * g)
        dG[:, 3 * H :] = dh * tc * o * (1 - o)
        return dG

    return run


def torch_baseline(dh, dc, acts, c_prev, c):
    """PyTorch on the GPU, elementwise ops as eager PyTorch runs them."""
    import torch

    def run():
        i, f, g, o = acts.chunk(4, dim=1)
        tc = torch.tanh(c)
        dct = dc + dh * o * (1 - tc * tc)
        return torch.cat(
            [
                dct * g * i * (1 - i),
                dct * c_prev * f * (1 - f),
                dct * i * (1 - g * g),
                dh * tc * o * (1 - o),
            ],
            dim=1,
        )

    return run


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "lstm_cell_backward_v1",
            "one thread per hidden unit: dc through both paths, four gate gradients",
            lstm_cell_backward_v1,
            blocks=(32, 256, 1024),
        ),
    ),
    ref=lstm_cell_backward_ref,
    make_inputs=make_inputs,
    check_sizes=((1, 1), (3, 7), (64, 129), (17, 1000), (257, 31)),
    bench_size=(64, 1024),
    # read dh, dc, acts (4H), c_prev, c; write dG (4H) and dc_prev
    bytes_moved=lambda size: 4 * size[0] * size[1] * (1 + 1 + 4 + 1 + 1 + 4 + 1),
    tolerance=2e-6,  # products of a few floats and one tanhf: a few ulp
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
