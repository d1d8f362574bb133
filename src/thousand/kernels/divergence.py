"""Warp divergence: the same work, a branch decided per thread or per warp (B4).

python -m thousand.kernels.divergence     # check both versions, then time them
"""

from __future__ import annotations

import functools

import numpy as np

from thousand.cuda import Staging, cdiv, check_array, check_block, check_shape, launch
from thousand.kernels.family import Family, Version, pick

OP = "divergence"
STEPS = 32  # as in divergence.cu: turns per element
MAX_PATHS = 32  # one path per lane of a warp at most
PATHS = 32  # what the checks and benchmarks use: the worst case for v1


def rotation(path: int) -> np.ndarray:
    """Path p's turn [[c, -s], [s, c]], with the float32 constants of divergence.cu."""
    c = np.float32(1 - (path + 1) ** 2 / 8192)  # exact: (p + 1)^2 <= 1024 < 2^24
    s = np.float32((path + 1) / 64)
    return np.array([[c, -s], [s, c]], dtype=np.float64)


# --8<-- [start:ref]
def path_of(i: np.ndarray, paths: int, per_warp: bool) -> np.ndarray:
    """Which path element i takes: i % P (v1), or (i // 32) % P, one per warp (v2)."""
    return (i // 32 if per_warp else i) % paths


def divergence_ref(
    x: np.ndarray, paths: int = PATHS, per_warp: bool = False
) -> np.ndarray:
    """STEPS turns of (x, 0), in closed form: x times the top-left entry of R^STEPS,
    R the turn of element i's path. float64, rounded once at the end."""
    _check_paths(paths)
    gain = np.array(
        [np.linalg.matrix_power(rotation(p), STEPS)[0, 0] for p in range(paths)]
    )
    path = path_of(np.arange(x.size), paths, per_warp)
    return (x.astype(np.float64) * gain[path]).astype(np.float32)


# --8<-- [end:ref]


def divergence_numpy(x: np.ndarray, paths: int = PATHS):
    """What a NumPy user would write: the same STEPS turns, each a few whole-array
    float32 operations. Returns run(), which computes into buffers made once."""
    _check_paths(paths)
    path = path_of(np.arange(x.size), paths, per_warp=False)
    c = np.array([rotation(p)[0, 0] for p in range(paths)], np.float32)[path]
    s = np.array([rotation(p)[1, 0] for p in range(paths)], np.float32)[path]
    u, w, t1, t2 = (np.empty_like(x) for _ in range(4))

    def run():
        np.copyto(u, x)
        w.fill(0)
        for _ in range(STEPS):
            np.multiply(c, u, out=t1)
            np.multiply(s, w, out=t2)
            np.multiply(s, u, out=u)  # u is free once both products are taken
            np.multiply(c, w, out=w)
            np.add(w, u, out=w)  # w' = s u + c w
            np.subtract(t1, t2, out=u)  # u' = c u - s w
        return u

    return run


def _check_paths(paths) -> None:
    if not (
        isinstance(paths, (int, np.integer))
        and not isinstance(paths, bool)
        and 1 <= paths <= MAX_PATHS
        and paths & (paths - 1) == 0
    ):
        raise ValueError(
            f"{OP}: `paths` must be a power of two from 1 to {MAX_PATHS} (a warp's "
            f"lanes split evenly over the paths), got {paths!r}"
        )


def _divergence(name, x, out, block, paths):
    _check_paths(paths)
    check_array(OP, "x", x, ndim=1)
    if out is not None:
        check_array(OP, "out", out, ndim=1)
        check_shape(OP, "out", out, x.shape)
    check_block(OP, (block,))
    if name == "divergence_v2" and block % 32:
        raise ValueError(
            f"{OP}: divergence_v2 decides the path per warp, so a block must be "
            f"whole warps (a multiple of 32 threads), got {block}"
        )
    n = x.shape[0]
    stage = Staging(OP, x)
    (dx,) = stage.inputs()
    d_out = stage.output(out, x.shape)
    if n:
        grid = (cdiv(n, block),)
        launch(OP, name, grid, (block,), dx, d_out, np.int32(n), np.int32(paths))
    return stage.result(d_out, out)


# --8<-- [start:launchers]
def divergence_v1(x, out=None, block=256, paths=PATHS):
    """Path i % paths: within a warp, `paths` different paths."""
    return _divergence("divergence_v1", x, out, block, paths)


def divergence_v2(x, out=None, block=256, paths=PATHS):
    """Path (i // 32) % paths: one path per warp."""
    return _divergence("divergence_v2", x, out, block, paths)


# --8<-- [end:launchers]


def divergence(x, out=None, version=2, block=256, paths=PATHS):
    return pick(FAMILY, version)(x, out=out, block=block, paths=paths)


def make_inputs(rng, size):
    return (rng.standard_normal(size[0], dtype=np.float32),)


# Every step: two fused multiply-adds (2 FLOPs each) and two multiplies.
FLOPS_PER_STEP = 6

FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "divergence_v1",
            "branch decided per thread: the warp runs every path, one after another",
            divergence_v1,
            blocks=(32, 96, 256),
            ref=lambda x, block: divergence_ref(x, PATHS, per_warp=False),
        ),
        Version(
            2,
            "divergence_v2",
            "branch decided per warp: the same work, no divergence",
            divergence_v2,
            blocks=(32, 96, 256),
            ref=lambda x, block: divergence_ref(x, PATHS, per_warp=True),
        ),
    ),
    # The family's ref is v1's (the NumPy baseline computes it); each version is
    # checked against its own, since v1 and v2 send element i down other paths.
    ref=functools.partial(divergence_ref, paths=PATHS),
    make_inputs=make_inputs,
    check_sizes=((1,), (5,), (33,), (1023,), (65541,), (1_000_003,)),
    bench_size=(2**24,),
    flops=lambda size: FLOPS_PER_STEP * STEPS * size[0],
    # 32 steps, each rounding u and w twice (relative 2^-24 each), against a float64
    # closed form: at most about 128 * 2^-24 = 8e-6 of |x| if every rounding went
    # the same way; on the CPU backend the largest error is below 1e-6.
    tolerance=1e-5,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)
