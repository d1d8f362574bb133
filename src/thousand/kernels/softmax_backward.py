"""The backward pass of a row-wise softmax: dx = y * (dy - sum(dy * y, row)).

    dx = softmax_backward(dy, y)   # dy, y: (rows, cols) float32, C order

y is the forward's output, softmax(x), and the backward needs it rather than x: the
Jacobian of softmax is diag(y) - y y^T, and applied to dy it is the line above.

python -m thousand.kernels.softmax_backward
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version
from thousand.kernels.softmax import softmax_ref

OP = "softmax_backward"


# --8<-- [start:ref]
def softmax_backward_ref(dy: np.ndarray, y: np.ndarray) -> np.ndarray:
    """In float64, rounded once to float32."""
    dy64, y64 = np.asarray(dy, np.float64), np.asarray(y, np.float64)
    s = (dy64 * y64).sum(axis=1, keepdims=True)  # (rows, 1)
    return (y64 * (dy64 - s)).astype(np.float32)


# --8<-- [end:ref]


def _run(name, dy, y, out, block, rows_per_block):
    check_array(OP, "dy", dy, ndim=2)
    rows, cols = dy.shape
    check_array(OP, "y", y, ndim=2)
    check_shape(OP, "y", y, (rows, cols))
    if out is not None:
        check_array(OP, "out", out, ndim=2)
        check_shape(OP, "out", out, (rows, cols))
    (block,) = check_block(OP, block, ndim=1)  # an int before any arithmetic
    if block % 32:
        raise ValueError(f"{OP}: {name} needs whole warps, got a block of {block}")
    stage = Staging(OP, dy, y, names=("dy", "y"))
    d_dy, d_y = stage.inputs()
    # The dot product's reads end at a barrier (v2: the warp's shuffles) before any
    # write, and then each thread reads dy[k], y[k] before it writes dx[k]: out may
    # be dy or y itself, though no other overlap.
    d_out = stage.output(out, (rows, cols), in_place_ok=True)
    if rows and cols:
        grid = (cdiv(rows, rows_per_block(block)),)
        launch(
            OP, name, grid, (block,), d_dy, d_y, d_out, np.int32(rows), np.int32(cols)
        )
    return stage.result(d_out, out)


# --8<-- [start:launchers]
def softmax_backward_v1(dy, y, out=None, block=512):
    """One block per row: a block reduction for the dot product, then dx."""
    return _run("softmax_backward_v1", dy, y, out, block, lambda b: 1)


def softmax_backward_v2(dy, y, out=None, block=256):
    """One warp per row, block // 32 rows per block: for short rows."""
    return _run("softmax_backward_v2", dy, y, out, block, lambda b: b // 32)


# --8<-- [end:launchers]


def softmax_backward(dy, y, out=None, version=1, block=None):
    """The gradient with respect to x of a loss whose gradient with respect to
    y = softmax(x) (each row) is dy. `block`: by default the version's own."""
    v = FAMILY.version(version)
    return v.run(dy, y, out=out, block=v.default_block if block is None else block)


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    rows, cols = size
    dy = rng.standard_normal((rows, cols), dtype=np.float32)
    # What a softmax outputs: logits spread enough that some rows are peaked
    y = softmax_ref((rng.standard_normal((rows, cols)) * 3).astype(np.float32))
    return dy, y


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "softmax_backward_v1",
            "one block per row: a block reduction for sum(dy * y), then dx",
            softmax_backward_v1,
            blocks=(32, 256, 1024),
            # 4,096 columns on an H100: 512 threads ran 1.4x faster than 256
            default_block=512,
        ),
        Version(
            2,
            "softmax_backward_v2",
            "one warp per row: the dot product by shuffles only",
            softmax_backward_v2,
            blocks=(32, 256, 1024),
        ),
    ),
    ref=softmax_backward_ref,
    make_inputs=make_inputs,
    check_sizes=(
        (1, 1),
        (1, 5),
        (7, 33),
        (129, 7),
        (3, 1000),
        (33, 1025),
        (2, 4097),
        (1, 65537),
        (5, 4096),  # the last: what `python -m` times on the CPU backend
    ),
    bench_size=(32768, 4096),
    bytes_moved=lambda size: 3 * 4 * size[0] * size[1],  # read dy and y, write dx
    # Relative to max(|ref|, 1) >= 1, so an absolute error. s is a float32 dot
    # product whose weights y sum to 1, so its error stays near a few ulp of
    # max |dy|: at most 2.1e-7 on the CPU backend (every size and block, several
    # seeds); the GPU fuses multiply-adds and sums in another order: 1e-6.
    tolerance=1e-6,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
