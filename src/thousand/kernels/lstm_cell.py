"""lstm_cell: the four gates, c_t and h_t of one LSTM step, in one kernel.

python -m thousand.kernels.lstm_cell  # check every version, time it
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick

OP = "lstm_cell"


# --8<-- [start:ref]
def sigmoid64(z):
    return 1.0 / (1.0 + np.exp(-z))


def lstm_cell_all_ref(Gx, Gh, c_prev):
    """In float64: h_t, c_t and the activations [i, f, g, o] (gates in PyTorch's
    order) from the two products Gx = x_t W_ih + b and Gh = h_{t-1} W_hh."""
    z = Gx.astype(np.float64) + Gh  # (B, 4H)
    i, f, g, o = np.split(z, 4, axis=1)  # each (B, H)
    i, f, g, o = sigmoid64(i), sigmoid64(f), np.tanh(g), sigmoid64(o)
    c = f * c_prev + i * g
    h = o * np.tanh(c)
    return h, c, np.concatenate([i, f, g, o], axis=1)


def lstm_cell_ref(Gx, Gh, c_prev):
    return lstm_cell_all_ref(Gx, Gh, c_prev)[0]


# --8<-- [end:ref]


def _shapes(Gx, Gh, c_prev, out, c, acts):
    check_array(OP, "Gx", Gx, ndim=2)  # (B, 4H)
    B, H4 = Gx.shape
    if H4 % 4:
        raise ValueError(
            f"{OP}: `Gx` must be B x 4H (four gates side by side), got {Gx.shape}"
        )
    H = H4 // 4
    if B > 65535:
        raise ValueError(f"{OP}: at most 65,535 rows (the grid's y), got B={B}")
    check_array(OP, "Gh", Gh, ndim=2)
    check_shape(OP, "Gh", Gh, (B, H4))
    check_array(OP, "c_prev", c_prev, ndim=2)
    check_shape(OP, "c_prev", c_prev, (B, H))
    for arg, a, shape in (
        ("out", out, (B, H)),
        ("c", c, (B, H)),
        ("acts", acts, (B, H4)),
    ):
        if a is not None:
            check_array(OP, arg, a, ndim=2)
            check_shape(OP, arg, a, shape)
    return B, H


# --8<-- [start:launchers]
def lstm_cell_v1(Gx, Gh, c_prev, out=None, block=256, c=None, acts=None):
    """Returns h_t (into `out` if given); writes c_t into `c` and the activations
    into `acts` when given (arrays of the inputs' kind), else into scratch arrays
    that are dropped: the model always passes its own."""
    B, H = _shapes(Gx, Gh, c_prev, out, c, acts)
    check_block(OP, (block,))
    stage = Staging(OP, Gx, Gh, c_prev, names=("Gx", "Gh", "c_prev"))
    dGx, dGh, dc_prev = stage.inputs()
    d_h = stage.output(out, (B, H))
    if c is not None:  # more outputs: none may overlap the inputs or each other
        stage.named["out"] = out
    d_c = stage.output(c, (B, H), name="c")
    if acts is not None:
        stage.named["c"] = c
    d_acts = stage.output(acts, (B, 4 * H), name="acts")
    if B and H:
        grid = (cdiv(H, block), B)
        launch(OP, "lstm_cell_v1", grid, (block,), dGx, dGh, dc_prev, d_h, d_c,
               d_acts, np.int32(B), np.int32(H))  # fmt: skip
    if stage.on_host:
        for d, a in ((d_c, c), (d_acts, acts)):
            if a is not None:
                d.get(ary=a)
    return stage.result(d_h, out)


# --8<-- [end:launchers]


def lstm_cell(Gx, Gh, c_prev, out=None, version=1, block=256, c=None, acts=None):
    """h_t of one LSTM step; c_t and the gate activations into `c` and `acts`."""
    return pick(FAMILY, version)(Gx, Gh, c_prev, out=out, block=block, c=c, acts=acts)


def make_inputs(rng, size):
    B, H = size
    return (
        rng.standard_normal((B, 4 * H), dtype=np.float32),
        rng.standard_normal((B, 4 * H), dtype=np.float32),
        rng.standard_normal((B, H), dtype=np.float32),
    )


def numpy_baseline(Gx, Gh, c_prev):
    """The same step in NumPy float32, into outputs made once."""
    H = c_prev.shape[1]
    z = np.empty_like(Gx)
    h = np.empty_like(c_prev)

    def run():
        np.add(Gx, Gh, out=z)
        s = 1.0 / (1.0 + np.exp(-z))
        c = s[:, H : 2 * H] * c_prev + s[:, :H] * np.tanh(z[:, 2 * H : 3 * H])
        np.multiply(s[:, 3 * H :], np.tanh(c), out=h)
        return h

    return run


def torch_baseline(Gx, Gh, c_prev):
    """PyTorch on the GPU, elementwise ops as eager PyTorch runs them."""
    import torch

    def run():
        i, f, g, o = (Gx + Gh).chunk(4, dim=1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c)

    return run


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "lstm_cell_v1",
            "one thread per hidden unit: four gates, c and h in one pass",
            lstm_cell_v1,
            blocks=(32, 256, 1024),
        ),
    ),
    ref=lstm_cell_ref,
    make_inputs=make_inputs,
    check_sizes=((1, 1), (3, 7), (64, 129), (17, 1000), (257, 31)),
    bench_size=(64, 1024),
    # read Gx, Gh (4H each) and c_prev; write h, c and the four activations
    bytes_moved=lambda size: 4 * size[0] * size[1] * (4 + 4 + 1 + 1 + 1 + 4),
    tolerance=2e-6,  # expf and tanhf within 2 ulp; every output lies in [-1, 1]
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
