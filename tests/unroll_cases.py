"""Shared by the GPU and CPU layers: the column sums at every K, beyond the family's
K = 16 (which v2 is compiled for), on the versions that take any K."""

import numpy as np

from thousand.experiments.b8_sass import loops, unroll_sass
from thousand.kernels.unroll import V2_ROWS, V4_ROWS, reorder_bound, unroll, unroll_ref

# Every remainder of K % 4 (v3's remainder loop), each of v4's instances and the K
# beside them (its fallback loop), and no rows at all.
ROWS = sorted({0, 1, 2, 3, 5, 6, 7, 9, 15, 17, 31, 33, 64, *V4_ROWS})
COLUMNS = [1, 33, 1000]
ANY_K = [1, 3, 4]  # the versions that take K as an argument


def check(version: int, k: int, n: int) -> None:
    x = np.random.default_rng(1000 * k + n).random((k, n), dtype=np.float32)
    out = unroll(x, version=version)
    ref = unroll_ref(x)
    if version == 3:  # four accumulators: another order of the same additions
        bound = reorder_bound(k) * max(ref.max(initial=0.0), 1.0)
        assert np.abs(out - ref).max(initial=0.0) <= bound, (version, k, n)
    else:  # the reference's order: bit for bit
        np.testing.assert_array_equal(out, ref, err_msg=f"v{version}, K = {k}")


def check_sass() -> None:
    """unroll.cu for sm_90: v1 keeps one loop with one load and one add per trip;
    v2 has no loop and all its loads; registers within what a thread may have."""
    code, regs = unroll_sass("sm_90")
    assert set(code) >= {f"unroll_v{v}" for v in (1, 2, 3, 4)}
    v1, v2 = code["unroll_v1"], code["unroll_v2"]
    (body,) = loops(v1)
    assert [i.base for i in body].count("LDG") == 1
    assert [i.base for i in body].count("FADD") == 1
    assert loops(v2) == [] and [i.base for i in v2].count("LDG") == V2_ROWS
    assert all(0 < r <= 255 for r in regs.values())
