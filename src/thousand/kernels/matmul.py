"""Matrix multiplication: the naive kernel that opens the ladder.

python -m thousand.kernels.matmul
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick

OP = "matmul"


def matmul_ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """In float64: the float32 kernel is judged against the exact product."""
    return a.astype(np.float64) @ b.astype(np.float64)


def _check(a, b, out):
    check_array(OP, "a", a, ndim=2)  # (M, K)
    check_array(OP, "b", b, ndim=2)  # (K, N)
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            f"{OP}: inner dimensions differ: a is {a.shape}, b is {b.shape} "
            "(a must be M x K and b K x N)"
        )
    shape = (a.shape[0], b.shape[1])  # (M, N)
    if out is not None:
        check_array(OP, "out", out, ndim=2)
        check_shape(OP, "out", out, shape)
    return shape


def matmul_v1(a, b, out=None, block=(32, 8)):
    M, N = _check(a, b, out)
    K = a.shape[1]
    check_block(OP, block)
    bx, by = block
    stage = Staging(OP, a, b)
    da, db = stage.inputs()
    d_out = stage.output(out, (M, N))
    if M and N:
        launch(
            OP,
            "matmul_v1",
            (cdiv(N, bx), cdiv(M, by)),
            block,
            da,
            db,
            d_out,
            np.int32(M),
            np.int32(N),
            np.int32(K),
        )
    return stage.result(d_out, out)


def matmul(a, b, out=None, version=1, block=(32, 8)):
    return pick(FAMILY, version)(a, b, out=out, block=block)


def make_inputs(rng, size):
    M, N, K = size
    return (
        rng.standard_normal((M, K), dtype=np.float32),
        rng.standard_normal((K, N), dtype=np.float32),
    )


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "matmul_v1",
            "naive: one thread per output, all loads from DRAM/L2",
            matmul_v1,
            blocks=((32, 8), (16, 16), (8, 8)),
            default_block=(32, 8),
        ),
    ),
    ref=matmul_ref,
    make_inputs=make_inputs,
    # sizes are (M, N, K)
    check_sizes=(
        (1, 1, 1),
        (3, 5, 7),
        (17, 31, 13),
        (64, 64, 64),
        (129, 257, 65),
        (1000, 300, 517),
    ),
    bench_size=(4096, 4096, 4096),
    flops=lambda size: 2 * size[0] * size[1] * size[2],
    tolerance=1e-5,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
