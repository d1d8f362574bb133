"""Column sums, the gradient of a bias added to every row (track A's backward pass).

python -m thousand.kernels.col_sum
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick

OP = "col_sum"


def col_sum_ref(G: np.ndarray) -> np.ndarray:
    return G.astype(np.float64).sum(axis=0)


def col_sum_v1(G, out=None, block=128):
    check_array(OP, "G", G, ndim=2)  # (M, N)
    M, N = G.shape
    if out is not None:
        check_array(OP, "out", out, ndim=1)
        check_shape(OP, "out", out, (N,))
    check_block(OP, (block,))
    stage = Staging(OP, G)
    (dG,) = stage.inputs()
    d_out = stage.output(out, (N,))
    if N:
        launch(
            OP,
            "col_sum_v1",
            (cdiv(N, block),),
            (block,),
            dG,
            d_out,
            np.int32(M),
            np.int32(N),
        )
    return stage.result(d_out, out)


def col_sum(G, out=None, version=1, block=128):
    return pick(FAMILY, version)(G, out=out, block=block)


def make_inputs(rng, size):
    return (rng.standard_normal(size, dtype=np.float32),)


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "col_sum_v1",
            "one thread per column, walking down it: coalesced rows",
            col_sum_v1,
            blocks=(32, 128),
            default_block=128,
        ),
    ),
    ref=col_sum_ref,
    make_inputs=make_inputs,
    # (M, N); M = 0 is an empty sum: every column is 0
    check_sizes=((1, 1), (0, 5), (7, 3), (1000, 10), (129, 257), (4099, 31)),
    bench_size=(16384, 4096),
    bytes_moved=lambda size: 4 * (size[0] * size[1] + size[1]),
    # M float32 additions in a row: error grows like sqrt(M) ulps of the running sum
    tolerance=1e-5,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
