"""One layer of neurons, y = sigmoid(W x + b): where B1 meets track A.

python -m thousand.kernels.neuron_layer
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import (
    Staging,
    cdiv,
    check_array,
    check_block,
    check_index_range,
    check_shape,
    launch,
)
from thousand.kernels.family import Family, Version, pick

OP = "neuron_layer"


# --8<-- [start:ref]
def neuron_layer_ref(W: np.ndarray, x: np.ndarray, b: np.ndarray) -> np.ndarray:
    z = W.astype(np.float64) @ x.astype(np.float64) + b  # (N_out,)
    return 1.0 / (1.0 + np.exp(-z))


# --8<-- [end:ref]


def _run(name, W, x, b, out, block, threads_per_neuron):
    check_array(OP, "W", W, ndim=2)  # (N_out, N_in)
    n_out, n_in = W.shape
    check_array(OP, "x", x, ndim=1)
    check_shape(OP, "x", x, (n_in,))
    check_array(OP, "b", b, ndim=1)
    check_shape(OP, "b", b, (n_out,))
    if out is not None:
        check_array(OP, "out", out, ndim=1)
        check_shape(OP, "out", out, (n_out,))
    check_block(OP, (block,))
    if block % threads_per_neuron:
        raise ValueError(f"{OP}: block must be a multiple of {threads_per_neuron}")
    # v2's thread index runs to n_out * 32, past what W's size bounds
    check_index_range(OP, "the threads", n_out, threads_per_neuron, unit="threads")
    stage = Staging(OP, W, x, b, names=("W", "x", "b"))
    dW, dx, db = stage.inputs()
    d_out = stage.output(out, (n_out,))
    if n_out:
        grid = (cdiv(n_out * threads_per_neuron, block),)
        launch(
            OP, name, grid, (block,), dW, dx, db, d_out, np.int32(n_out), np.int32(n_in)
        )
    return stage.result(d_out, out)


def neuron_layer_v1(W, x, b, out=None, block=256):
    return _run("neuron_layer_v1", W, x, b, out, block, threads_per_neuron=1)


def neuron_layer_v2(W, x, b, out=None, block=256):
    return _run("neuron_layer_v2", W, x, b, out, block, threads_per_neuron=32)


def neuron_layer(W, x, b, out=None, version=2, block=256):
    return pick(FAMILY, version)(W, x, b, out=out, block=block)


def make_inputs(rng, size):
    n_out, n_in = size
    scale = 1.0 / np.sqrt(max(n_in, 1))  # keeps W x of order 1, so sigmoid is not flat
    return (
        (rng.standard_normal((n_out, n_in)) * scale).astype(np.float32),
        rng.standard_normal(n_in, dtype=np.float32),
        rng.standard_normal(n_out, dtype=np.float32),
    )


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "neuron_layer_v1",
            "one thread per neuron: uncoalesced rows of W",
            neuron_layer_v1,
            blocks=(32, 128, 256),
        ),
        Version(
            2,
            "neuron_layer_v2",
            "one warp per neuron: coalesced, warp-shuffle sum",
            neuron_layer_v2,
            blocks=(32, 128, 256, 1024),
        ),
    ),
    ref=neuron_layer_ref,
    make_inputs=make_inputs,
    # sizes are (N_out, N_in)
    check_sizes=((1, 1), (3, 7), (33, 65), (257, 1000), (1000, 4099)),
    bench_size=(16384, 16384),
    bytes_moved=lambda size: 4 * (size[0] * size[1] + size[1] + 2 * size[0]),
    tolerance=1e-5,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
