"""CUDA semantics pinned down by tests/kernels/probe.cu, checked on either backend.

Each check launches through thousand.cuda.launch, so the backend in force decides
where it runs: tests/cpu runs them on the CPU backend, tests/gpu on the GPU. The
expected values are worked out here in NumPy, one oracle for both.
"""

from pathlib import Path

import numpy as np

from thousand.cuda import launch, to_device

PROBE = Path(__file__).resolve().parent / "kernels" / "probe.cu"


def check_coords_3d():
    grid, block = (3, 2, 2), (4, 3, 2)
    n = int(np.prod(grid) * np.prod(block))
    d = to_device(np.full(6 * n, -1, np.int32))
    launch(PROBE, "coords", grid, block, d)
    got = d.get().reshape(n, 6)
    expected = [
        (tx, ty, tz, bx, by, bz)
        for bz in range(grid[2])
        for by in range(grid[1])
        for bx in range(grid[0])
        for tz in range(block[2])
        for ty in range(block[1])
        for tx in range(block[0])
    ]
    np.testing.assert_array_equal(got, np.array(expected, np.int32))


def check_reverse(kernel: str, block: int = 256, blocks: int = 5):
    x = np.arange(block * blocks, dtype=np.float32)
    out = to_device(np.full_like(x, np.nan))
    shared = block * 4 if kernel == "reverse_dynamic" else 0
    launch(PROBE, kernel, (blocks,), (block,), to_device(x), out, shared=shared)
    expected = x.reshape(blocks, block)[:, ::-1].ravel()
    np.testing.assert_array_equal(out.get(), expected)


def check_warp_ops(warps: int = 4):
    rng = np.random.default_rng(7)
    v = rng.integers(0, 100, size=32 * warps).astype(np.int32)
    out = to_device(np.zeros(7 * v.size, np.int32))
    launch(PROBE, "warp_ops", (1,), (v.size,), to_device(v), out)
    got = out.get().reshape(warps, 32, 7)
    w = v.reshape(warps, 32)
    np.testing.assert_array_equal(got[:, 0, 0], w.sum(axis=1))
    np.testing.assert_array_equal(got[:, :, 1], np.cumsum(w, axis=1))
    np.testing.assert_array_equal(
        got[:, :, 2], np.repeat(w.max(1, keepdims=True), 32, 1)
    )
    np.testing.assert_array_equal(got[:, :, 3], np.repeat(w[:, 3:4], 32, 1))
    bits = (w % 2 != 0).astype(np.int64) << np.arange(32)
    ballot = bits.sum(axis=1).astype(np.uint32).view(np.int32)
    np.testing.assert_array_equal(got[:, :, 4], np.repeat(ballot[:, None], 32, 1))
    assert (got[:, :, 5] == 1).all()  # all values are >= 0
    any_big = (w > 90).any(axis=1).astype(np.int32)
    np.testing.assert_array_equal(got[:, :, 6], np.repeat(any_big[:, None], 32, 1))


def check_atomics(grid: int = 37, block: int = 96):
    n = grid * block
    counter = to_device(np.zeros(1, np.int32))
    fsum = to_device(np.zeros(1, np.float32))
    dsum = to_device(np.zeros(1, np.float64))
    imax = to_device(np.array([-1], np.int32))
    imin = to_device(np.array([1], np.int32))
    cas = to_device(np.zeros(1, np.uint32))
    launch(PROBE, "atomics", (grid,), (block,), counter, fsum, dsum, imax, imin, cas)
    assert counter.get()[0] == n
    assert fsum.get()[0] == 0.5 * n
    assert dsum.get()[0] == 0.25 * n
    assert imax.get()[0] == n - 1
    assert imin.get()[0] == -(n - 1)
    assert cas.get()[0] == n


def check_syncthreads_count(blocks: int = 3, block: int = 100):
    out = to_device(np.zeros(blocks, np.int32))
    launch(PROBE, "count_multiples_of_three", (blocks,), (block,), out)
    np.testing.assert_array_equal(out.get(), len(range(0, block, 3)))


def check_float4(n4: int = 1000):
    x = np.arange(4 * n4, dtype=np.float32)
    out = to_device(np.full_like(x, np.nan))
    grid = (n4 + 127) // 128
    launch(
        PROBE, "scale4", (grid,), (128,), to_device(x), out, np.float32(3), np.int32(n4)
    )
    np.testing.assert_array_equal(out.get(), 3 * x)


SEMANTICS = {
    "3-D grid and block indexing": check_coords_3d,
    "static shared memory and __syncthreads": lambda: check_reverse("reverse_static"),
    "dynamic shared memory": lambda: check_reverse("reverse_dynamic"),
    "warp shuffles and votes": check_warp_ops,
    "atomics on int, float, double and CAS": check_atomics,
    "__syncthreads_count": check_syncthreads_count,
    "float4 loads, make_float4, __ldg": check_float4,
}
