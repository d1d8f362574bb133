"""B5 (memory management): the parts that need no GPU.

The two experiments need one (page-locked, mapped and managed memory, streams, copy
engines), and on the CPU backend they stop saying so (test_experiments.py). Their
logic is checked here against a stand-in for pycuda.driver that keeps "device"
memory in NumPy arrays addressed by their real addresses: every branch runs, the
result validates and draws, and a copy or kernel that does nothing is caught by the
experiments' own checks. What the stand-in cannot tell is whether PyCUDA and the
driver behave as it does; that is for the GPU run.
"""

import runpy

import numpy as np
import pytest

import thousand.cuda
from thousand.bench.ledger import SNIPPETS_DIR
from thousand.cuda import launch, use_backend
from thousand.experiments import ExperimentError, validate
from thousand.experiments import b5_streams as streams
from thousand.experiments import b5_transfers as transfers
from thousand.site import experiments as site


@pytest.fixture
def cpu_backend():
    before = use_backend("cpu")
    yield
    use_backend(before)


class Region:
    """Bytes the stand-in GPU can address: a device allocation or mapped host."""

    def __init__(self, drv, array: np.ndarray):
        self.drv, self.bytes = drv, array.reshape(-1).view(np.uint8)
        self.addr = array.ctypes.data
        drv.regions[self.addr] = self

    def __int__(self):
        return self.addr

    def free(self):
        self.drv.regions.pop(self.addr)


class HostAllocation(bytearray):
    """The `base` of a pagelocked_empty or managed_empty array."""

    def __init__(self, drv, nbytes: int, mapped: bool):
        super().__init__(b"\xff" * nbytes)
        self.drv, self.mapped, self.region = drv, mapped, None

    def get_device_pointer(self) -> int:
        if not self.mapped:
            raise RuntimeError("cuMemHostGetDevicePointer: not a DEVICEMAP allocation")
        if self.region is None:
            self.region = Region(self.drv, np.frombuffer(self, np.uint8))
        return self.region.addr

    def free(self):
        if self.region is not None:
            self.region.free()


class Event:
    def __init__(self, drv):
        self.drv, self.t = drv, None

    def record(self, stream=None):
        assert stream is None or isinstance(stream, Stream), stream
        self.drv.clock += 1.0  # every recorded event is 1 ms after the one before
        self.t = self.drv.clock
        return self

    def synchronize(self):
        return self

    def time_since(self, other) -> float:
        return self.t - other.t


class Stream:
    def synchronize(self):
        pass


class StandInDriver:
    """What the B5 experiments use of pycuda.driver, with NumPy underneath."""

    class host_alloc_flags:  # noqa: N801 (PyCUDA's names)
        PORTABLE, DEVICEMAP, WRITECOMBINED = 1, 2, 4

    class mem_attach_flags:  # noqa: N801
        GLOBAL, HOST, SINGLE = 1, 2, 4

    class device_attribute:  # noqa: N801
        ASYNC_ENGINE_COUNT = 40

    class Device:
        def get_attribute(self, attr):
            assert attr == StandInDriver.device_attribute.ASYNC_ENGINE_COUNT
            return 3

    class Context:
        @staticmethod
        def synchronize():
            pass

        @staticmethod
        def get_device():
            return StandInDriver.Device()

    def __init__(self, kernel_works=True, copies_work=True):
        self.regions, self.clock = {}, 0.0
        self.kernel_works, self.copies_work = kernel_works, copies_work
        self.Stream = Stream

    def Event(self):  # noqa: N802
        return Event(self)

    def view(self, addr: int, nbytes: int) -> np.ndarray:
        """The bytes at a device address, which must lie inside one region."""
        for start, region in self.regions.items():
            if start <= addr and addr + nbytes <= start + region.bytes.size:
                return region.bytes[addr - start : addr - start + nbytes]
        raise RuntimeError(f"illegal address {addr:#x} (+{nbytes} bytes)")

    def mem_alloc(self, nbytes: int) -> Region:
        return Region(self, np.full(nbytes, 0xFF, np.uint8))  # not zeroed, like GPUs

    def pagelocked_empty(self, shape, dtype, order="C", mem_flags=0):
        mapped = bool(mem_flags & self.host_alloc_flags.DEVICEMAP)
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        return np.ndarray(shape, dtype, buffer=HostAllocation(self, nbytes, mapped))

    def pagelocked_zeros(self, shape, dtype, order="C", mem_flags=0):
        out = self.pagelocked_empty(shape, dtype, order, mem_flags)
        out.fill(0)
        return out

    def managed_empty(self, shape, dtype, order="C", mem_flags=0):
        if mem_flags not in (self.mem_attach_flags.GLOBAL, self.mem_attach_flags.HOST):
            raise RuntimeError("cuMemAllocManaged: flags must be GLOBAL or HOST")
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        return np.ndarray(shape, dtype, buffer=HostAllocation(self, nbytes, True))

    def memset_d32(self, dest, value: int, count: int):
        self.view(int(dest), 4 * count).view(np.uint32)[:] = value

    def memcpy_htod(self, dest, src: np.ndarray):
        if self.copies_work:
            self.view(int(dest), src.nbytes)[:] = src.reshape(-1).view(np.uint8)

    def memcpy_dtoh(self, dest: np.ndarray, src):
        if self.copies_work:
            dest.reshape(-1).view(np.uint8)[:] = self.view(int(src), dest.nbytes)

    def memcpy_htod_async(self, dest, src, stream=None):
        assert stream is None or isinstance(stream, Stream), stream
        self.memcpy_htod(dest, src)

    def memcpy_dtoh_async(self, dest, src, stream=None):
        assert stream is None or isinstance(stream, Stream), stream
        self.memcpy_dtoh(dest, src)

    def launch(self, family, name, grid, block, src, dst, n, stream=None):
        """copy_v2 and sigmoid_v1 as the GPU computes them, on device addresses."""
        assert isinstance(src, np.uintp) and isinstance(dst, np.uintp)
        assert isinstance(n, np.int32) and (
            stream is None or isinstance(stream, Stream)
        )
        x = self.view(int(src), 4 * int(n)).view(np.float32)
        out = self.view(int(dst), 4 * int(n)).view(np.float32)
        if not self.kernel_works:
            return
        if (family, name) == ("copy", "copy_v2"):
            out[:] = x
        elif (family, name) == ("sigmoid", "sigmoid_v1"):
            out[:] = 1 / (1 + np.exp(-x.astype(np.float64)))
        else:
            raise AssertionError(f"unexpected kernel {family}.{name}")


SMALL = (4 * 2**10, 64 * 2**10, 2**20)


def run_transfers(monkeypatch, drv) -> dict:
    monkeypatch.setattr(transfers, "driver", lambda: drv)
    monkeypatch.setattr(transfers, "launch", drv.launch)
    monkeypatch.setattr(transfers, "QUICK_SIZES", SMALL)
    monkeypatch.setattr(transfers, "BENCH", SMALL[-1])
    return transfers.run(quick=True)


def run_streams(monkeypatch, drv) -> dict:
    monkeypatch.setattr(streams, "driver", lambda: drv)
    monkeypatch.setattr(streams, "launch", drv.launch)
    return streams.run(quick=True)


def test_launch_refuses_a_stream_on_the_cpu_backend(cpu_backend):
    x = np.ones(4, np.float32)
    with pytest.raises(ValueError, match="stream= needs a GPU"):
        launch("copy", "copy_v1", (1,), (4,), x, x, np.int32(4), stream=object())


def test_transfers_with_a_stand_in_driver(monkeypatch, cpu_backend):
    drv = StandInDriver()
    result = validate(transfers.EXPERIMENT, run_transfers(monkeypatch, drv))
    assert result["x"]["values"] == list(SMALL)
    assert len(result["series"]) == 7
    notes, series = result["notes"], result["series"]
    ratio = series["pinned H2D"][-1] / series["pageable H2D"][-1]
    assert notes["pinned_over_pageable_h2d_256MiB"] == pytest.approx(ratio)
    assert notes["peak_mapped_gbps"] == max(series[transfers.MAPPED])
    assert not drv.regions, "an allocation was never freed"
    assert site.draw(transfers.EXPERIMENT, result, "stand-in").startswith(b"<?xml")


@pytest.mark.parametrize(
    "broken", [{"kernel_works": False}, {"copies_work": False}], ids=str
)
def test_transfers_catch_an_operation_that_did_nothing(
    monkeypatch, cpu_backend, broken
):
    drv = StandInDriver(**broken)
    with pytest.raises(ExperimentError, match="b5-transfers: .*element 0 is"):
        run_transfers(monkeypatch, drv)
    assert not drv.regions, "an allocation was not freed after the failure"


def test_streams_with_a_stand_in_driver(monkeypatch, cpu_backend):
    drv = StandInDriver()
    result = validate(streams.EXPERIMENT, run_streams(monkeypatch, drv))
    assert list(result["lanes"]) == [
        f"{c}: {e}" for c, *_ in streams.CONFIGS for e in streams.ENGINES
    ]
    for lane, spans in result["lanes"].items():
        assert len(spans) == streams.CHUNKS, lane
        ends = [end for *_, end in spans]
        starts = [start for _, start, _ in spans]
        assert all(s >= e for s, e in zip(starts[1:], ends, strict=False)), lane
    notes = result["notes"]
    assert notes["speedup"] == pytest.approx(
        notes["serial_ms"] / notes["overlapped_ms"]
    )
    assert not drv.regions
    assert b"<svg" in site.draw(streams.EXPERIMENT, result, "stand-in")


def test_streams_catch_a_kernel_that_did_nothing(monkeypatch, cpu_backend):
    with pytest.raises(ExperimentError, match="sigmoid off NumPy's by inf"):
        run_streams(monkeypatch, StandInDriver(kernel_works=False))


def test_engine_lanes_start_a_span_when_the_engine_is_free():
    # two copies queued at once on two streams share one copy engine: the second
    # one's "before" event fires at 0 but it can only start when the first ends
    ops = [("H2D", 0.0, 2.0), ("H2D", 0.0, 4.0), ("kernel", 2.0, 2.5)]
    lanes = streams.engine_lanes("4 streams", ops)
    assert lanes == {
        "4 streams: H2D": [["H2D", 0.0, 2.0], ["H2D", 2.0, 4.0]],
        "4 streams: kernel": [["kernel", 2.0, 2.5]],
    }
    assert streams.total_ms(ops) == 4.0
    assert streams.from_first([("D2H", 3.0, 5.0), ("H2D", 1.0, 2.0)]) == [
        ("D2H", 2.0, 4.0),
        ("H2D", 0.0, 1.0),
    ]


@pytest.mark.parametrize("stem", ["b5_pinned", "b5_async"])
def test_snippet_runs_against_the_stand_in(monkeypatch, capsys, stem):
    drv = StandInDriver()
    monkeypatch.setattr(thousand.cuda, "on_cpu", lambda: False)
    monkeypatch.setattr(thousand.cuda, "driver", lambda: drv)
    monkeypatch.setattr(thousand.cuda, "launch", drv.launch)
    runpy.run_path(str(SNIPPETS_DIR / f"{stem}.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert out.count("\n") >= 5 and "True" in out, out
