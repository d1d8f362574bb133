"""`python -m thousand.cpu.bench`: how fast the CPU backend runs a real kernel.

The shared-memory + warp-shuffle reduction (reduce_v7) over 2^20 float32, on one
core and on all of them, in seconds. Its grid is sized to the "SMs" (worker
threads), so few fibers do long loops. A second row launches the shared-memory tree
(reduce_v3) with one element per thread: 2^20 fibers, each through 9 barriers, which
measures the cost of fiber switches. These are CPU emulation times: they say how
long a reader without a GPU waits, nothing about any GPU.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from thousand.cuda import to_device, use_backend
from thousand.kernels.reduce import reduce_ref, reduce_v3, reduce_v7

N = 2**20
TARGET_ONE_CORE_S = 1.0


def grid_stride(x):
    return reduce_v7(x)


def one_element_per_thread(x, block=256):
    return reduce_v3(x, block=block)  # 4096 blocks in the first pass


def seconds(run, workers: int, x_device, repeat: int = 5) -> tuple[float, float]:
    """Median seconds of `run` with `workers` threads, and the sum it computed."""
    os.environ["THOUSAND_CPU_WORKERS"] = str(workers)
    result = run(x_device).get()[0]  # warm-up: compiles once, loads the library
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run(x_device)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), float(result)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m thousand.cpu.bench",
        description="Time two reductions of 2^20 float32 on the CPU backend, on one "
        "core and on all of them (CPU emulation times, not GPU figures).",
    )
    p.add_argument(
        "--repeat", type=at_least_one, default=5, help="timed runs per cell (5)"
    )
    return p


def at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def main(argv: list[str] | None = None) -> None:
    repeat = parser().parse_args(argv).repeat
    use_backend("cpu")
    x = np.random.default_rng(0).random(N, dtype=np.float32)
    exact = reduce_ref(x)[0]
    d = to_device(x)
    cores = os.cpu_count() or 1
    before = os.environ.get("THOUSAND_CPU_WORKERS")
    rows = []
    try:
        for label, run in (
            ("reduce_v7, grid-stride (shuffles)", grid_stride),
            ("reduce_v3, one element per thread", one_element_per_thread),
        ):
            one, r1 = seconds(run, 1, d, repeat)
            every, rn = seconds(run, cores, d, repeat)
            rows.append((label, one, every, r1, rn))
    finally:
        if before is None:
            os.environ.pop("THOUSAND_CPU_WORKERS", None)
        else:
            os.environ["THOUSAND_CPU_WORKERS"] = before
    print(
        f"sum of 2^20 float32 on the CPU backend (CPU emulation times, {cores} cores)"
    )
    print(f"exact sum {exact:.6e}")
    print(f"{'kernel':36} {'1 core':>9} {'all cores':>10} {'speed-up':>9}  sums")
    for label, one, every, r1, rn in rows:
        print(
            f"{label:36} {one:8.3f}s {every:9.3f}s {one / every:8.2f}x  "
            f"{r1:.6e} {rn:.6e}"
        )
    # reduce_v3 per thread: 1 + log2(256) = 9 barriers, so 10 runs between switches
    per_resume = rows[1][1] / (N * 10)
    print(f"one core, reduce_v3: {per_resume * 1e9:.0f} ns per fiber resume, with work")
    one = rows[0][1]
    met = "met" if one < TARGET_ONE_CORE_S else "NOT met"
    print(f"target: reduce_v7 under {TARGET_ONE_CORE_S:.0f} s on one core: {met}")


if __name__ == "__main__":
    main()
