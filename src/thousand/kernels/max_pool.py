"""Max pooling, NHWC, with the argmax its backward pass needs (A10, A11).

    Y = max_pool(X, PoolGeometry(window=3, stride=2), argmax=idx)   # AlexNet's

python -m thousand.kernels.max_pool
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from thousand.cuda import (
    Staging,
    backend,
    cdiv,
    check_array,
    check_block,
    check_shape,
    launch,
)
from thousand.kernels.family import Family, Version, pick

OP = "max_pool"


@dataclass(frozen=True)
class PoolGeometry:
    """A window x window window moved by `stride`, over the image padded by `pad`
    on every side; the padding never wins. pad <= window // 2 (PyTorch's rule), so
    every window holds at least one pixel of the image."""

    window: int = 2
    stride: int = 2
    pad: int = 0

    def __post_init__(self):
        for name, least in (("window", 1), ("stride", 1), ("pad", 0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < least:
                raise ValueError(
                    f"PoolGeometry: `{name}` must be an int >= {least}, got {v!r}"
                )
        if self.pad > self.window // 2:
            raise ValueError(
                f"PoolGeometry: `pad` must be at most window // 2 = "
                f"{self.window // 2} (a window of padding alone has no maximum), "
                f"got {self.pad}"
            )

    def output_hw(self, H: int, W: int) -> tuple[int, int]:
        """P, Q: how many window positions fit in the padded image."""
        k, s, pad = self.window, self.stride, self.pad
        return (H + 2 * pad - k) // s + 1, (W + 2 * pad - k) // s + 1

    def check(self, op: str, H: int, W: int) -> tuple[int, int]:
        """P, Q, or a clear error when the window does not fit."""
        P, Q = self.output_hw(H, W)
        if P < 1 or Q < 1:
            raise ValueError(
                f"{op}: a {self.window} x {self.window} window does not fit in a "
                f"{H} x {W} image padded by {self.pad}"
            )
        return P, Q


POOL_2X2 = PoolGeometry()  # the default: 2 x 2 windows, stride 2, no padding


def check_geometry(op: str, geom) -> PoolGeometry:
    if not isinstance(geom, PoolGeometry):
        raise ValueError(
            f"{op}: `geom` must be a PoolGeometry(window, stride, pad), got "
            f"{type(geom).__name__}"
        )
    return geom


def max_pool_parts(X: np.ndarray, geom: PoolGeometry) -> tuple[np.ndarray, np.ndarray]:
    """(Y, argmax) in float64 and int32: every window's cells in row-major order,
    the padding as -inf, np.argmax taking the first of equal values."""
    N, H, W, C = X.shape
    k, s, pad = geom.window, geom.stride, geom.pad
    P, Q = geom.output_hw(H, W)
    padded = np.full((N, H + 2 * pad, W + 2 * pad, C), -np.inf)
    padded[:, pad : pad + H, pad : pad + W] = X
    index = np.full((H + 2 * pad, W + 2 * pad), -1, np.int64)  # h W + w, or -1
    index[pad : pad + H, pad : pad + W] = np.arange(H * W).reshape(H, W)
    rows = (np.arange(P) * s)[:, None] + np.arange(k)  # (P, k) padded rows
    cols = (np.arange(Q) * s)[:, None] + np.arange(k)  # (Q, k)
    # windows[n, p, q, i, j, c] = padded[n, rows[p, i], cols[q, j], c]
    windows = padded[:, rows[:, None, :, None], cols[None, :, None, :]]
    windows = windows.reshape(N, P, Q, k * k, C)
    first = windows.argmax(axis=3)  # (N, P, Q, C): position in the window
    Y = np.take_along_axis(windows, first[:, :, :, None], axis=3)[:, :, :, 0]
    cells = index[rows[:, None, :, None], cols[None, :, None, :]].reshape(P, Q, k * k)
    argmax = np.take_along_axis(cells[None, :, :, :, None], first[:, :, :, None], 3)
    return Y, argmax[:, :, :, 0].astype(np.int32)


def max_pool_ref(X: np.ndarray, geom: PoolGeometry = POOL_2X2) -> np.ndarray:
    return max_pool_parts(X.astype(np.float64), geom)[0]


_NO_ARGMAX: dict = {}  # backend -> int32 buffer for the argmax nobody asked for


def _argmax_scratch(n: int):
    from thousand.cuda import empty

    have = _NO_ARGMAX.get(backend())
    if have is None or have.shape[0] < n:
        have = _NO_ARGMAX[backend()] = empty((max(n, 1),), np.int32)
    return have[:n]


def max_pool_v1(X, geom=POOL_2X2, out=None, block=256, argmax=None):
    """X (N, H, W, C) -> Y (N, P, Q, C); `argmax` (int32, Y's shape) receives each
    winner's h W + w when given (otherwise a kept buffer does: the kernel always
    writes it, as PyTorch's max_pool2d with return_indices does)."""
    check_array(OP, "X", X, ndim=4)  # (N, H, W, C)
    geom = check_geometry(OP, geom)
    N, H, W, C = X.shape
    P, Q = geom.check(OP, H, W)
    shape = (N, P, Q, C)
    for arg, a, dtype in (("out", out, np.float32), ("argmax", argmax, np.int32)):
        if a is not None:
            check_array(OP, arg, a, ndim=4, dtype=dtype)
            check_shape(OP, arg, a, shape)
    check_block(OP, block, ndim=1)
    stage = Staging(OP, X, names=("X",))
    (dX,) = stage.inputs()
    dY = stage.output(out, shape)
    if argmax is not None:  # a second output: it must not overlap the first either
        stage.named["out"] = out
        d_arg = stage.output(argmax, shape, np.int32, name="argmax")
    else:
        d_arg = _argmax_scratch(int(np.prod(shape)))
    if dY.size:
        geometry = (geom.window, geom.stride, geom.pad)
        ints = [np.int32(v) for v in (N, H, W, C, P, Q, *geometry)]
        grid = (cdiv(dY.size, block),)
        launch(OP, "max_pool_v1", grid, (block,), dX, dY, d_arg, *ints)
    if argmax is not None and stage.on_host:
        d_arg.get(ary=argmax)
    return stage.result(dY, out)


def max_pool(X, geom=POOL_2X2, out=None, argmax=None, version=1, block=256):
    return pick(FAMILY, version)(X, geom, out=out, block=block, argmax=argmax)


def make_inputs(rng, size):
    """size (N, H, W, C, window, stride, pad). Whole numbers from -3 to 3: many
    windows hold equal maxima, so the first-wins rule is exercised."""
    N, H, W, C, k, s, pad = size
    X = rng.integers(-3, 4, (N, H, W, C)).astype(np.float32)
    return X, PoolGeometry(k, s, pad)


def typical_inputs(rng, size):
    N, H, W, C, k, s, pad = size
    return rng.standard_normal((N, H, W, C), dtype=np.float32), PoolGeometry(k, s, pad)


def bytes_moved(size):
    """Read X once, write Y and argmax (4 bytes each)."""
    N, H, W, C = size[:4]
    P, Q = PoolGeometry(*size[4:]).output_hw(H, W)
    return 4 * N * C * (H * W + 2 * P * Q)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "max_pool_v1",
            "one thread per output: the window's largest value and where it was",
            max_pool_v1,
            blocks=(64, 256),
        ),
    ),
    ref=max_pool_ref,
    make_inputs=make_inputs,
    typical_inputs=typical_inputs,
    # (N, H, W, C, window, stride, pad): 2 x 2 stride 2 on odd sides (the last row
    # left out), AlexNet's overlapping 3 x 3 stride 2, padding (ResNet's 3 x 3,
    # stride 2, pad 1), a window of 1, the window as large as the padded image
    check_sizes=(
        (1, 1, 1, 1, 1, 1, 0),
        (1, 2, 2, 1, 2, 2, 0),
        (2, 5, 7, 3, 2, 2, 0),
        (2, 7, 9, 5, 3, 2, 0),
        (3, 11, 10, 17, 3, 2, 1),
        (1, 4, 6, 2, 5, 1, 2),
        (2, 13, 13, 33, 3, 1, 1),
        (1, 3, 3, 2, 3, 3, 1),
    ),
    bench_size=(32, 56, 56, 64, 3, 2, 1),
    bytes_moved=bytes_moved,
    tolerance=0.0,  # a maximum is one of the inputs: exact
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
