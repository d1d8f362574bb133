"""What a hostile kernel or machine does to the CPU backend: each must end in a clear
Python error, with the process still usable, never a dead interpreter or a hang.

Checks that could kill the process (SIGFPE, abort, Ctrl-C, the mapping limit) run in
a fresh interpreter: a regression then fails the test instead of killing pytest.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import require_tool
from thousand import cpu
from thousand.cpu import engine, memory
from thousand.cuda import KernelFault
from thousand.cuda.errors import BuildCacheError

ROOT = Path(__file__).resolve().parents[2]

# A reader's own kernels: each file in tmp is a family given as a Path.
READER_KERNELS = r"""
#include <assert.h>  // glibc's assert comes back: it must still be caught
extern "C" __global__ void divide(const int* a, int* out, int d) {
    out[threadIdx.x] = a[threadIdx.x] / d;
}
extern "C" __global__ void positive(const int* a) {
    assert(a[threadIdx.x] > 0);
}
extern "C" __global__ void copy(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) out[i] = x[i];  // one element too far
}
extern "C" __global__ void load4(const float* x, float* out, int offset) {
    const float4* p = reinterpret_cast<const float4*>(x + offset);
    float4 v = p[threadIdx.x];
    out[threadIdx.x] = v.x + v.y + v.z + v.w;
}
extern "C" __global__ void load_double(const float* x, double* out, int offset) {
    out[threadIdx.x] = *reinterpret_cast<const double*>(x + offset + 2 * threadIdx.x);
}
extern "C" __global__ void spin(int* out) {
    volatile int* v = out;
    for (;;) v[threadIdx.x] += 1;
}
extern "C" __global__ void spin_at_barrier(int* out) {
    for (;;) {  // the fibers take turns forever: the scheduler never stops either
        out[threadIdx.x] += 1;
        __syncthreads();
    }
}
extern "C" __global__ void twice(const float* x, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = 2 * x[i];
}
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory) -> Path:
    require_tool("g++")
    cu = tmp_path_factory.mktemp("reader") / "mine.cu"
    cu.write_text(READER_KERNELS)
    return cu


def python(code: str, *args, env=None, timeout=300) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter; its exit tells whether the process lived."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )


PRELUDE = """
import sys
from pathlib import Path
import numpy as np
from thousand import cpu
from thousand.cuda import KernelFault
cu = Path(sys.argv[1])

def fault(*args):
    try:
        cpu.launch(cu, *args)
    except KernelFault as e:
        print("FAULT", e)
    else:
        print("NO FAULT")

def still_works():
    x = cpu.to_device(np.arange(64, dtype=np.float32))
    out = cpu.empty(64)
    cpu.launch(cu, "twice", (2,), (32,), x, out)
    print("WORKS", out.get()[-1])
"""


# ---- 1. SIGFPE and assert ------------------------------------------------------------


@pytest.mark.parametrize("checked", ["0", "1"], ids=["fast", "checked"])
def test_division_by_zero_and_assert_are_kernel_faults(kernels, checked):
    done = python(
        PRELUDE
        + """
a = cpu.to_device(np.arange(1, 33, dtype=np.int32))
fault("divide", (1,), (32,), a, cpu.empty(32, np.int32), np.int32(0))
still_works()
fault("positive", (1,), (32,), cpu.to_device(np.arange(32, dtype=np.int32)))
still_works()
""",
        kernels,
        env={"THOUSAND_CPU_CHECKED": checked},
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("FAULT divide: integer division by zero"), lines
    assert "of block (0,0,0)" in lines[0]
    assert lines[1] == "WORKS 126.0"
    # thread 0 holds 0, the one value that is not positive
    assert lines[2].startswith("FAULT positive: assertion `a[threadIdx.x] > 0` failed")
    assert "mine.cu:7 (thread (0,0,0) of block (0,0,0))" in lines[2]
    assert lines[3] == "WORKS 126.0"


def test_assert_outside_a_kernel_still_aborts(tmp_path):
    require_tool("g++")
    host = tmp_path / "host.cu"
    host.write_text(
        'extern "C" int check(int x) { assert(x > 0); return x; }\n'
        'extern "C" __global__ void k(int* out) { out[0] = 1; }\n'
    )
    done = python(
        """
import ctypes, sys
from pathlib import Path
from thousand.cpu import build, engine
engine.runtime()
lib = ctypes.CDLL(str(build.family_library(Path(sys.argv[1]), False, set())))
lib.check(0)
""",
        host,
    )
    assert done.returncode == -signal.SIGABRT
    assert "Assertion `x > 0' failed." in done.stderr


# ---- 2. any number of workers --------------------------------------------------------


@pytest.mark.parametrize("workers", ["64", "512"])
def test_many_workers_fit_in_the_mapping_limit(kernels, workers):
    done = python(
        PRELUDE
        + """
for block in (1024, 256, 32, 1024):
    n = block * 600
    x = cpu.to_device(np.arange(n, dtype=np.float32))
    out = cpu.empty(n)
    cpu.launch(cu, "twice", (600,), (block,), x, out)
    assert (out.get() == 2 * np.arange(n)).all(), block
print("OK")
""",
        kernels,
        env={"THOUSAND_CPU_WORKERS": workers},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "OK"


def test_stacks_that_cannot_be_mapped_are_a_memory_error(kernels):
    # Address space capped just above what the process uses: a block of 1024 threads
    # needs 1024 stacks of 64 KiB, which no longer fit.
    done = python(
        PRELUDE
        + """
import re, resource
x = cpu.to_device(np.zeros(1024, np.float32))
cpu.launch(cu, "twice", (1,), (32,), x, x)  # runtime loaded, threads made once
size = int(re.search(r"VmSize:\\s+(\\d+)", open("/proc/self/status").read())[1])
hard = resource.getrlimit(resource.RLIMIT_AS)[1]
resource.setrlimit(resource.RLIMIT_AS, ((size + 24 * 1024) * 1024, hard))
try:
    cpu.launch(cu, "twice", (1,), (1024,), x, x)
except MemoryError as e:
    print("MEMORY", e)
resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
still_works()
""",
        kernels,
        env={"THOUSAND_CPU_WORKERS": "1"},
    )
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first.startswith("MEMORY twice: cannot map the fiber stacks of 1 workers")
    assert "vm.max_map_count" in first and "THOUSAND_CPU_WORKERS" in first
    assert "device arrays are live" in first
    assert second == "WORKS 126.0"


# ---- 3. a damaged cache is rebuilt ---------------------------------------------------


def test_damaged_cached_libraries_are_rebuilt(kernels, tmp_path):
    env = {"THOUSAND_CACHE_DIR": str(tmp_path / "cache")}
    run = PRELUDE + "still_works()\n"
    first = python(run, kernels, env=env)
    assert first.returncode == 0, first.stderr
    libraries = sorted((tmp_path / "cache" / "cpu").glob("*.so"))
    assert len(libraries) == 2  # the runtime and mine.cu's checked build
    damages = {
        "truncated": lambda data: data[: len(data) // 3],
        "garbage": lambda data: bytes(len(data)),
        "no sidecar": None,
    }
    for what, damage in damages.items():
        for lib in libraries:
            if damage:
                lib.write_bytes(damage(lib.read_bytes()))
            else:
                lib.with_name(lib.name + ".sha256").unlink()
        again = python(run, kernels, env=env)
        assert again.returncode == 0, f"{what}: {again.stderr}"
        assert again.stdout.strip() == "WORKS 126.0", what


def test_a_library_that_cannot_load_names_the_cache(tmp_path):
    bad = tmp_path / "bad.so"
    bad.write_bytes(b"not a library" * 100)
    with pytest.raises(cpu.build.CpuBuildError, match=f"cache \\({tmp_path}\\)"):
        cpu.build.load(bad)


# ---- 4. Ctrl-C ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "kernel,checked",
    [("spin", "0"), ("spin", "1"), ("spin_at_barrier", "1")],
    ids=["fast", "checked", "barrier"],
)
def test_ctrl_c_stops_an_endless_kernel(kernels, kernel, checked):
    code = (
        PRELUDE
        + f"""
import signal, traceback
# A terminal's Ctrl-C: a child inherits its parent thread's signal mask, and a
# test runner's worker may have SIGINT blocked by whatever ran in it before.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {{signal.SIGINT}})
signal.signal(signal.SIGINT, signal.default_int_handler)
out = cpu.empty((4, 64), np.int32)
cpu.module(cu, {checked == "1"})  # compiled before we say the kernel is running
print("RUNNING", flush=True)
try:
    cpu.launch(cu, "{kernel}", (8,), (64,), out)
except KeyboardInterrupt:
    traceback.print_exc()
still_works()
"""
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(kernels)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={
            **os.environ,
            "THOUSAND_CPU_WORKERS": "3",
            "THOUSAND_CPU_CHECKED": checked,
        },
    )
    try:
        assert proc.stdout.readline() == "RUNNING\n"
        time.sleep(1)
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert time.monotonic() - start < 10
    assert f"KeyboardInterrupt: {kernel}: interrupted (Ctrl-C) (thread (" in err
    assert out.strip() == "WORKS 126.0"


# ---- 5. the mapping limit of device arrays ---------------------------------------


def test_too_many_device_arrays_say_which_limit(monkeypatch):
    require_tool("g++")
    monkeypatch.setattr(memory, "MAP_LIMIT", 2 * memory.live_arrays() + 41)
    arrays = []
    with pytest.raises(MemoryError) as e:
        for _ in range(100):
            arrays.append(cpu.empty(4))
    assert len(arrays) == 20
    message = str(e.value)
    assert f"{memory.live_arrays():,} device arrays are live" in message
    assert "each costs 2 to 3 memory mappings" in message
    assert f"may have {2 * memory.live_arrays() + 1:,} (vm.max_map_count)" in message
    assert "free arrays you no longer need" in message
    del arrays
    cpu.empty(4)  # freed arrays give their mappings back


def test_the_real_mapping_limit_is_named_and_survived(kernels):
    done = python(
        PRELUDE
        + """
x = cpu.to_device(np.zeros(64, np.float32))
cpu.module(cu, True)  # loaded while there is room
arrays = []
try:
    while True:
        arrays.append(cpu.empty(4))
except MemoryError as e:
    print("MEMORY", e)
try:  # its fiber stacks need mappings too
    cpu.launch(cu, "twice", (2,), (32,), x, x)
except MemoryError as e:
    print("LAUNCH", e)
del arrays[: len(arrays) // 2]
still_works()
""",
        kernels,
    )
    assert done.returncode == 0, done.stderr
    first, second, third = done.stdout.splitlines()
    for line in first, second:
        assert "device arrays are live, each costs 2 to 3 memory mappings" in line
        assert "(vm.max_map_count): free arrays" in line
    assert second.startswith("LAUNCH twice: cannot map the fiber stacks")
    assert third == "WORKS 126.0"


# ---- 6. readers' kernels run checked by default --------------------------------------


def test_a_readers_kernel_is_checked_by_default(kernels, monkeypatch):
    monkeypatch.delenv("THOUSAND_CPU_CHECKED", raising=False)
    monkeypatch.setitem(engine._SETTINGS, "checked", None)
    assert engine.wants_checked(kernels)
    assert not engine.wants_checked("vector_add")  # the package's own: fast
    n = 100
    x, out = cpu.to_device(np.zeros(n, np.float32)), cpu.empty(n)
    oob = f"out-of-bounds read of 4 bytes at byte {4 * n} of `x`"
    with pytest.raises(KernelFault, match=oob):
        cpu.launch(kernels, "copy", (1,), (128,), x, out, np.int32(n))
    monkeypatch.setenv("THOUSAND_CPU_CHECKED", "0")  # asked for: fast, and silent
    assert not engine.wants_checked(kernels)
    cpu.launch(kernels, "copy", (1,), (128,), x, out, np.int32(n))


# ---- 7. misaligned vector accesses -------------------------------------------------


@pytest.mark.parametrize("offset", [1, 2, 3])
def test_misaligned_float4_is_a_fault_in_the_checked_build(kernels, offset):
    x, out = cpu.to_device(np.ones(256, np.float32)), cpu.empty(32)
    with cpu.checked_mode(), pytest.raises(KernelFault) as e:
        cpu.launch(kernels, "load4", (1,), (32,), x, out, np.int32(offset))
    assert (
        f"misaligned address: read of 16 bytes at byte {4 * offset} of `x`; a GPU "
        "requires an access of 16 bytes to start at a multiple of 16"
    ) in str(e.value)
    assert "(thread (0,0,0) of block (0,0,0))" in str(e.value)


def test_aligned_vectors_and_misaligned_doubles(kernels):
    x, out = cpu.to_device(np.ones(256, np.float32)), cpu.empty(32)
    with cpu.checked_mode():
        cpu.launch(kernels, "load4", (1,), (32,), x, out, np.int32(4))
        np.testing.assert_array_equal(out.get(), 4.0)
        doubles = cpu.empty(32, np.float64)
        cpu.launch(kernels, "load_double", (1,), (32,), x, doubles, np.int32(2))
        with pytest.raises(KernelFault, match="read of 8 bytes at byte 4 of `x`"):
            cpu.launch(kernels, "load_double", (1,), (32,), x, doubles, np.int32(1))


# ---- 8. on/off variables -----------------------------------------------------------


@pytest.mark.parametrize(
    "value,checked",
    [("1", True), ("TRUE", True), ("yes", True), ("On", True)]
    + [("0", False), ("false", False), ("NO", False), ("off", False)],
)
def test_checked_accepts_the_usual_spellings(monkeypatch, value, checked):
    monkeypatch.setitem(engine._SETTINGS, "checked", None)
    monkeypatch.setenv("THOUSAND_CPU_CHECKED", value)
    assert engine.wants_checked("vector_add") is checked
    assert engine.wants_checked(Path("/elsewhere/mine.cu")) is checked


def test_checked_rejects_anything_else(monkeypatch):
    monkeypatch.setitem(engine._SETTINGS, "checked", None)
    monkeypatch.setenv("THOUSAND_CPU_CHECKED", "maybe")
    with pytest.raises(ValueError, match="THOUSAND_CPU_CHECKED='maybe': give 1, true"):
        engine.wants_checked("vector_add")


# ---- 9. the cache folder -----------------------------------------------------------


def test_an_unusable_cache_names_the_folder_and_the_variable(tmp_path, monkeypatch):
    require_tool("g++")
    blocker = tmp_path / "file.txt"
    blocker.write_text("a file, where the cache wants a folder")
    monkeypatch.setenv("THOUSAND_CACHE_DIR", str(blocker / "sub"))
    with pytest.raises(BuildCacheError) as e:
        cpu.build.runtime_library()
    message = str(e.value)
    assert f"the build cache {blocker / 'sub' / 'cpu'} cannot be used" in message
    assert "set THOUSAND_CACHE_DIR to a writable folder" in message


def test_a_full_disk_is_not_a_compiler_error(tmp_path, monkeypatch):
    require_tool("g++")
    monkeypatch.setenv("THOUSAND_CACHE_DIR", str(tmp_path))

    run = subprocess.run

    def full(cmd, **kwargs):
        if "--version" in cmd:  # the compiler's identity: ask the real one
            return run(cmd, **kwargs)
        return subprocess.CompletedProcess(
            cmd, 1, "", "/usr/bin/ld: final link failed: No space left on device\n"
        )

    monkeypatch.setattr(cpu.build.subprocess, "run", full)
    with pytest.raises(BuildCacheError) as e:
        cpu.build.runtime_library()
    assert "the disk is full (No space left on device)" in str(e.value)
    assert str(tmp_path / "cpu") in str(e.value)
    assert "rejected" not in str(e.value)
