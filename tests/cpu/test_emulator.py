"""The CPU backend: CUDA's semantics, and errors where a GPU would hang or corrupt.

The semantics checks are shared with tests/gpu/test_probe.py, which runs the same
kernels and expectations on a real GPU.
"""

from pathlib import Path

import numpy as np
import pytest

from tests.probe_checks import PROBE, SEMANTICS
from thousand import cpu
from thousand.cuda import KernelFault, launch, to_device

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")


@pytest.mark.parametrize("check", SEMANTICS.values(), ids=SEMANTICS.keys())
def test_semantics(check):
    check()


@pytest.mark.parametrize("checked", [False, True], ids=["fast", "checked"])
def test_semantics_hold_in_the_fast_build_too(checked):
    with cpu.checked_mode(checked):
        for check in SEMANTICS.values():
            check()


def fault(kernel, grid, block, *args, shared=0) -> str:
    with pytest.raises(KernelFault) as e:
        launch(PROBE, kernel, grid, block, *args, shared=shared)
    return str(e.value)


def test_barrier_that_some_threads_never_reach():
    out = to_device(np.zeros(64, np.float32))
    msg = fault("early_return_before_barrier", (1,), (64,), out, np.int32(40))
    assert msg.startswith("early_return_before_barrier: __syncthreads on line")
    assert "40 of 64 threads wait there" in msg
    assert "thread (40,0,0) has returned" in msg
    assert "block (0,0,0)" in msg


def test_threads_at_different_barriers():
    msg = fault("divergent_barriers", (1,), (32,), to_device(np.zeros(32, np.float32)))
    assert "wait at different __syncthreads" in msg
    assert "thread (1,0,0) of block (0,0,0)" in msg


def test_shuffle_waiting_for_a_lane_that_returned():
    msg = fault("shuffle_after_exit", (1,), (32,), to_device(np.zeros(32, np.float32)))
    lines = Path(PROBE).read_text().splitlines()
    start = next(i for i, t in enumerate(lines) if "void shuffle_after_exit(" in t)
    at = next(i for i in range(start, len(lines)) if "__shfl_down_sync" in lines[i])
    assert f"__shfl_down_sync on line {at + 1} with mask 0xffffffff" in msg
    assert "waits for lane 16 (thread (16,0,0)), which has returned" in msg


def test_out_of_bounds_read_names_buffer_block_and_thread():
    n = 37
    x = to_device(np.zeros(n, np.float32))
    msg = fault(
        "read_past_end", (2,), (32,), x, to_device(np.zeros(n, np.float32)), np.int32(n)
    )
    assert f"out-of-bounds read of 4 bytes at byte {4 * n} of `x`" in msg
    assert f"which has {4 * n} bytes" in msg
    assert "thread (4,0,0) of block (1,0,0)" in msg  # i = 36 reads x[37]


def test_wild_write_faults_even_in_the_fast_build():
    from thousand.kernels.vector_add import vector_add_v2

    with cpu.checked_mode(False):
        x = to_device(np.zeros(1000, np.float32))
        with pytest.raises(KernelFault, match="invalid memory access"):
            # claim 10x the length: the kernel runs into the guard page
            launch(
                "vector_add", "vector_add_v2", (40,), (256,), x, x, x, np.int32(10_000)
            )
        # the process and the backend carry on
        np.testing.assert_array_equal(
            vector_add_v2(np.ones(5, np.float32), np.ones(5, np.float32)), 2.0
        )


def test_stack_overflow_is_reported():
    msg = fault("huge_local_array", (1,), (2,), to_device(np.zeros(2, np.float32)))
    assert "stack overflow" in msg


@pytest.mark.parametrize(
    "grid,block,why",
    [
        ((1,), (2048,), "a block of 2048 threads; CUDA allows at most 1024"),
        ((1,), (1, 1, 128), "block dimensions are limited to (1024, 1024, 64)"),
        ((0,), (32,), "every grid and block dimension must be at least 1"),
        ((1, 70000), (32,), "grid dimensions are limited"),
    ],
)
def test_bad_launch_configurations(grid, block, why):
    out = to_device(np.zeros(32, np.int32))
    with pytest.raises(RuntimeError, match="launch of coords with grid=") as e:
        launch(PROBE, "coords", grid, block, out)
    assert why in str(e.value)


def test_arguments_are_checked_against_the_cpp_signature():
    x = to_device(np.zeros(8, np.float32))
    with pytest.raises(
        TypeError, match=r"parameter 'n' is int32 in C\+\+; pass np.int32"
    ):
        launch(PROBE, "read_past_end", (1,), (8,), x, x, 8)
    with pytest.raises(TypeError, match="parameter 'x' is a pointer"):
        launch(
            PROBE, "read_past_end", (1,), (8,), np.zeros(8, np.float32), x, np.int32(8)
        )
    with pytest.raises(TypeError, match=r"takes 3 arguments \(x, out, n\), got 2"):
        launch(PROBE, "read_past_end", (1,), (8,), x, x)


def test_gpu_only_kernels_are_refused_with_the_reason(monkeypatch):
    module = cpu.module(PROBE, True)
    monkeypatch.setitem(module.gpu_only, "coords", "needs tensor cores")
    monkeypatch.delitem(module._kernels, "coords", raising=False)
    with pytest.raises(cpu.GpuOnly, match="coords runs only on a GPU: needs tensor"):
        launch(PROBE, "coords", (1,), (1,), to_device(np.zeros(6, np.int32)))


def test_compiler_errors_name_the_file(tmp_path):
    bad = tmp_path / "broken.cu"
    bad.write_text('extern "C" __global__ void k(float* x) { x[0] = y; }\n')
    with pytest.raises(
        cpu.build.CpuBuildError, match=r"broken.cu:1:49: error: .y. was not declared"
    ):
        cpu.module(bad, False)
