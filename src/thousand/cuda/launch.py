"""Launch helpers: grid arithmetic and a launch that checks the launch itself."""

from __future__ import annotations

import functools
import time

import numpy as np

from .arrays import Staging, check_aligned, check_array, check_block, check_shape
from .backend import on_cpu
from .compiler import kernel
from .device import device_info, driver
from .graphs import Graph


def cdiv(a: int, b: int) -> int:
    """Ceiling division: how many blocks of `b` cover `a` items."""
    return (a + b - 1) // b


def grid_stride_blocks(block: int, n_items: int) -> int:
    """Enough blocks to fill every SM to its thread limit, never more than needed."""
    info = device_info()
    full = info["sm_count"] * (info["max_threads_per_sm"] // block)
    return max(1, min(full, cdiv(n_items, block)))


class KernelTimes:
    """`with KernelTimes() as kt:` times every launch made inside the block, each
    between two CUDA events (on the CPU backend, by the host clock: emulation
    times). After the block, kt.launches is [(family, kernel, ms), ...] in launch
    order. The events cost a little host time per launch: time throughput without
    it, and use it to see where the device's time goes."""

    active: KernelTimes | None = None

    def __enter__(self):
        if KernelTimes.active is not None:
            raise RuntimeError("KernelTimes: one is already timing launches")
        self._pending, self.launches = [], []
        KernelTimes.active = self
        return self

    def __exit__(self, *exc):
        KernelTimes.active = None
        if not on_cpu() and self._pending:
            self._pending[-1][3].synchronize()
        for family, name, start, stop in self._pending:
            ms = stop.time_since(start) if not on_cpu() else 1e3 * (stop - start)
            self.launches.append((family, name, ms))
        return False

    def by_family(self) -> dict[str, tuple[int, float]]:
        """family -> (launches, total ms), the largest total first."""
        out: dict[str, list] = {}
        for family, _, ms in self.launches:
            c = out.setdefault(family, [0, 0.0])
            c[0], c[1] = c[0] + 1, c[1] + ms
        ranked = sorted(out.items(), key=lambda item: -item[1][1])
        return {family: (n, ms) for family, (n, ms) in ranked}


class Replay:
    """`with Replay() as replay:` records every launch made inside the block (each
    is made as usual); replay() then makes the same launches again, kernel by
    kernel with the same arguments, without the checks and staging a launcher
    does in Python first: tens of microseconds a launch, which add up where a
    training step makes hundreds. Only for a sequence that repeats on the very same
    device arrays (an optimizer's step over the same parameters): its caller
    makes sure they are, since nothing is checked again."""

    active: Replay | None = None

    def __enter__(self):
        if Replay.active is not None:
            raise RuntimeError("Replay: one is already recording launches")
        self.calls = []
        Replay.active = self
        return self

    def __exit__(self, *exc):
        Replay.active = None
        return False

    def __call__(self) -> None:
        for family, name, call, stream in self.calls:
            _issue(family, name, call, stream)


def _issue(family: str, name: str, call, stream=None) -> None:
    """Make one launch (call()), timed if KernelTimes is on, recorded if Replay is;
    on the CPU backend, only recorded while a Graph records (a GPU capture does not
    run the kernels either)."""
    if on_cpu() and Graph.recording is not None:
        Graph.recording.calls.append(call)
        return
    timer = KernelTimes.active
    if on_cpu():
        start = time.perf_counter()
        call()
        if timer is not None:
            timer._pending.append((family, name, start, time.perf_counter()))
    else:
        if timer is not None:
            start, stop = driver().Event(), driver().Event()
            start.record(stream)
        call()
        if timer is not None:
            stop.record(stream)
            timer._pending.append((family, name, start, stop))
    if Replay.active is not None:
        Replay.active.calls.append((family, name, call, stream))


def launch(
    family: str, name: str, grid, block, *args, shared: int = 0, stream=None
) -> None:
    """Launch `name` from `kernels/<family>.cu`; a refused launch raises at once.

    The driver rejects a bad configuration (too many threads per block, a grid too
    large) when the launch is issued; we re-raise that with the kernel's name and
    shape. Errors inside a running kernel surface later, at the next synchronisation.
    On the CPU backend the launch runs to completion here, and a fault inside the
    kernel raises KernelFault naming the block and thread.

    `stream` (a pycuda.driver.Stream) queues the kernel on that stream instead of
    the default one, so it can overlap copies and kernels queued on other streams.
    The CPU backend has no streams (every launch has finished when it returns):
    there it must be None.
    """
    if stream is None and Graph.recording is not None:
        stream = Graph.recording.stream  # captured into the graph (None on the CPU)
    if on_cpu():
        if stream is not None:
            raise ValueError(
                f"{name}: stream= needs a GPU; the CPU backend runs every launch "
                "to completion before it returns, so it has no streams"
            )
        from thousand import cpu

        call = functools.partial(
            cpu.launch, family, name, grid, block, *args, shared=shared
        )
        _issue(family, name, call)
        return
    if any(type(a).__name__ == "DeviceArray" for a in args):
        raise ValueError(
            f"{name}: a CPU-backend DeviceArray was passed to a GPU launch"
        )
    drv = driver()
    fn = kernel(family, name)
    if shared > 48 * 1024:  # beyond 48 KiB a kernel must opt in (sm_70 and later)
        fn.set_attribute(drv.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, shared)
    grid = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
    block = tuple(int(b) for b in block) + (1,) * (3 - len(block))
    call = functools.partial(
        fn, *args, grid=grid, block=block, shared=shared, stream=stream
    )
    try:
        _issue(family, name, call, stream)
    except drv.Error as e:
        raise RuntimeError(
            f"launch of {name} with grid={grid} block={block} failed: {e}"
        ) from e


def launch_1d(
    op: str,
    name: str,
    inputs: dict,
    out,
    block: int,
    grid_for,
    align: int | None = None,
):
    """Check, stage and launch `name(in_0, ..., out, n)` over equal-length 1-D arrays.

    For elementwise kernels: element i of `out` from element i of each input, so
    `out` may be one of the inputs itself (in place), never a shifted view of one.
    `grid_for(n)` gives the number of blocks; `align` demands that many bytes of
    alignment (vector loads). Returns `out` in the kind of array the caller passed.
    """
    named = dict(inputs) if out is None else {**inputs, "out": out}
    for arg, a in named.items():  # every one is an array before any is looked at
        check_array(op, arg, a, ndim=1)
    first = next(iter(inputs.values()))
    for arg, a in named.items():
        check_shape(op, arg, a, first.shape)
    check_block(op, block, ndim=1)
    if align:
        for arg, a in named.items():
            check_aligned(op, arg, a, align)
    n = first.shape[0]
    stage = Staging(op, *inputs.values(), names=tuple(inputs))
    d_in = stage.inputs()
    d_out = stage.output(out, first.shape, in_place_ok=True)
    if n:
        launch(op, name, (grid_for(n),), (block,), *d_in, d_out, np.int32(n))
    return stage.result(d_out, out)
