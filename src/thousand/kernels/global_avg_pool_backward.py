"""The gradient of global average pooling: each pixel gets dY / (H W) (A11).

python -m thousand.kernels.global_avg_pool_backward
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick

OP = "global_avg_pool_backward"


def check_hw(op: str, hw) -> tuple[int, int]:
    """(H, W) of the input image: two ints >= 1."""
    if not (
        isinstance(hw, tuple | list)
        and len(hw) == 2
        and all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in hw)
        and min(hw) >= 1
    ):
        raise ValueError(
            f"{op}: `hw` must be the input's (H, W), two ints >= 1, got {hw!r}"
        )
    return int(hw[0]), int(hw[1])


def global_avg_pool_backward_ref(dY: np.ndarray, hw) -> np.ndarray:
    H, W = hw
    dX = dY.astype(np.float64)[:, None, None, :] / (H * W)
    return np.broadcast_to(dX, (dY.shape[0], H, W, dY.shape[1])).copy()


def global_avg_pool_backward_v1(dY, hw, out=None, block=256):
    """dY (N, C), hw = (H, W) -> dX (N, H, W, C)."""
    check_array(OP, "dY", dY, ndim=2)  # (N, C)
    H, W = check_hw(OP, hw)
    N, C = dY.shape
    shape = (N, H, W, C)
    if out is not None:
        check_array(OP, "out", out, ndim=4)
        check_shape(OP, "out", out, shape)
    check_block(OP, block, ndim=1)
    stage = Staging(OP, dY, names=("dY",))
    (d_dY,) = stage.inputs()
    dX = stage.output(out, shape)
    if dX.size:
        ints = [np.int32(v) for v in (N, H * W, C)]
        grid = (cdiv(dX.size, block),)
        launch(OP, "global_avg_pool_backward_v1", grid, (block,), d_dY, dX, *ints)
    return stage.result(dX, out)


def global_avg_pool_backward(dY, hw, out=None, version=1, block=256):
    return pick(FAMILY, version)(dY, hw, out=out, block=block)


def make_inputs(rng, size):
    """size (N, H, W, C): the forward's input shape."""
    N, H, W, C = size
    return rng.standard_normal((N, C), dtype=np.float32), (H, W)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "global_avg_pool_backward_v1",
            "one thread per input element: its share of the image's gradient",
            global_avg_pool_backward_v1,
            blocks=(64, 256),
        ),
    ),
    ref=global_avg_pool_backward_ref,
    make_inputs=make_inputs,
    check_sizes=((1, 1, 1, 1), (2, 3, 5, 7), (3, 7, 7, 33), (2, 13, 11, 64)),
    bench_size=(32, 56, 56, 64),
    bytes_moved=lambda s: 4 * (s[0] * s[1] * s[2] * s[3] + s[0] * s[3]),
    tolerance=1e-6,  # one float32 division
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
