"""`python -m thousand.kernels.<family>`: check every version, time it, print it."""

from __future__ import annotations

from thousand.bench.checks import bench_inputs, check_version, prepared_run
from thousand.kernels.family import Family


def runnable(family: Family) -> list:
    """The versions this backend can run: the CPU skips GPU-only ones."""
    from thousand.cuda import on_cpu

    return [v for v in family.versions if not (on_cpu() and v.gpu_only)]


def check_all(family: Family, *, sizes=None) -> bool:
    ok = True
    for v in runnable(family):
        for size in sizes or family.check_sizes:
            err, tol = check_version(family, v, size, v.default_block)
            passed = err <= tol
            ok &= passed
            if not passed:
                print(f"FAIL {v.kernel} size={size}: error {err:.3g} > {tol:.3g}")
    return ok


def _figure(x: float) -> str:
    """Whole numbers for GPU-sized rates, two decimals for the emulator's small ones."""
    return f"{x:,.0f}" if x >= 10 else f"{x:.2f}"


def check_then_time(family: Family) -> None:
    from thousand.cuda import device_info, median, on_cpu, time_ms

    info = device_info()
    print(f"{family.name} on {info['name']} (sm_{info['compute_capability']})")
    if not check_all(family):
        raise SystemExit(f"{family.name}: a version disagrees with the reference")
    print(f"checked every version at sizes {list(family.check_sizes)}: all match")
    if on_cpu():  # emulation: a small size, few repeats, and say what the times are
        size, warmup, repeat = family.check_sizes[-1], 1, 3
        how = "CPU emulation: host clock, median of 3; not a GPU figure"
    else:
        size, warmup, repeat = family.bench_size, 3, 20
        how = "median of 20, CUDA events, L2 flushed"
    inputs = bench_inputs(family, size)
    print(f"\ntimed at size {size} ({how})")
    print(f"{'version':<22}{'ms':>10}{'rate':>16}")
    for v in runnable(family):
        ms = median(time_ms(prepared_run(v, inputs), warmup=warmup, repeat=repeat))
        if family.bytes_moved:
            rate = f"{_figure(family.bytes_moved(size) / ms / 1e6)} GB/s"
        else:
            rate = f"{_figure(family.flops(size) / ms / 1e9)} TFLOP/s"
        print(f"{v.kernel:<22}{ms:>10.3f}{rate:>16}")
