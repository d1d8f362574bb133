"""Every snippet runs on the CPU backend and prints what the GPU run printed.

The reference is the output the GPU run recorded (docs/assets/outputs). Lines must
match exactly, with two allowances: the size of a rounding error (a number like
4.1e-08) may differ as long as both are tiny, because g++ and nvcc round and fuse
floating-point operations differently; and the driver's own words after "failed:".
Snippets that print the device or times cannot match a GPU: for those we check
that every time is labelled as CPU emulation.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import require_tool
from thousand.bench import ledger as L

DEVICE_SPECIFIC = {
    "b1_device_query": "prints the device's own name, limits and sizes",
    "b1_timing": "prints times, which on the CPU backend are CPU emulation times",
    "b17_cpu_speed": "prints CPU emulation times, which depend on the CPU",
    "b3_limits": "prints the device's own name, limits and SM count",
    "b2_device": "prints the device's own SM count, warps, L2 size and bandwidth",
    "b2_pitfalls": "prints times, which on the CPU backend are CPU emulation times",
    "b8_sass": "prints SASS from the GPU machine's nvcc",
    "b8_pitfalls": "prints SASS and ptxas's report from the GPU machine's nvcc",
    "a4_train_mlp": "prints training times; on the CPU backend it trains 2 epochs",
    "a6_train_lenet": "prints training times; on the CPU backend 2 short epochs",
    "a10_alexnet_vgg": "trains 2-channel networks on 64 images on the CPU backend",
    "a11_resnet": "trains depth 8 at 2 channels on 64 images on the CPU backend",
    "b11_conv": "no tensor-core rung on the CPU backend, and sums in another order",
    "b18_cuda_graph": "prints training times; on the CPU backend 2 epochs",
    "a14_train_transformer": "prints training times; on the CPU backend a few steps "
    "of a tiny model",
    "a16_generate": "samples from a tiny model trained a few steps on the CPU "
    "backend, and 8 held-out paragraphs, not 291",
    "b12_attention": "smaller shapes on the CPU backend, and no bf16 rung (tensor "
    "cores)",
    "b13_triton": "Triton's interpreter multiplies float32 in full precision (the "
    "GPU in TF32) and cannot multiply bfloat16",
    "b15_extension": "builds the extension with nvcc on the GPU; on the CPU backend "
    "the op runs gelu.cu there, so its first line and its dtype message differ",
    "b16_compile": "prints the C++ Inductor writes for the CPU, not the Triton it "
    "writes for the GPU",
    "a5_rbm": "CD-1 samples: a rounding apart flips a sample, and the run drifts; "
    "3 epochs on the CPU backend",
    "a8_dbn": "CD-1 and Gibbs samples drift as a5_rbm's do; on the CPU backend 2 "
    "epochs a layer and 50 fine-tuning steps",
}
# Snippets that disassemble with cuobjdump (and nvdisasm, which it runs): they come
# with the CUDA toolkit, not with every nvcc (pip's has neither). Where one is
# missing the snippet must stop with the error that names it.
NEEDS_CUOBJDUMP = {"b8_sass", "b8_pitfalls"}
# Snippets that need hardware the CPU backend does not emulate: on the CPU they must
# stop with the error that says so, not print something else.
GPU_ONLY = {
    "b9_tensor_cores": "runs only on a GPU",
    # wgmma and TMA are sm_90a's; the launchers refuse anywhere else
    "b9_hopper": "runs on a GPU only",
    # page-locked memory, streams and DMA copies belong to the driver (B5)
    "b5_pinned": "runs only on a GPU",
    "b5_async": "runs only on a GPU",
    # the SM's limits and the occupancy calculator are the CUDA driver's (B4)
    "b4_occupancy": "runs only on a GPU",
    # cuTile Python compiles for the GPU with tileiras; nothing emulates it (B14)
    "b14_cutile": "runs only on a GPU",
}
SMALL_ERROR = re.compile(r"\d\.\de-\d\d")


def recorded_output(stem: str) -> str | None:
    for ledger in L.ledger_files():
        out = L.OUTPUTS_DIR / ledger.stem / f"{stem}.txt"
        if out.exists():
            return out.read_text()
    return None


def run_on_cpu(path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "THOUSAND_BACKEND": "cpu"}
    return subprocess.run(
        [sys.executable, str(path)],
        capture_output=True,
        text=True,
        cwd=L.ROOT,
        env=env,
        timeout=300,
    )


def _have_cuobjdump() -> bool:
    from thousand.experiments.b8_sass import ToolMissing, cuda_tool

    try:
        cuda_tool("cuobjdump"), cuda_tool("nvdisasm")
    except ToolMissing:
        return False
    return True


def comparable(line: str) -> tuple[str, list[float]]:
    """The line with small errors and driver messages taken out, and those errors."""
    errors = [float(e) for e in SMALL_ERROR.findall(line)]
    line = SMALL_ERROR.sub("<error>", line)
    return re.sub(r"failed: .*", "failed: <driver's words>", line), errors


@pytest.mark.parametrize("path", L.snippets(), ids=lambda p: p.name)
def test_snippet_runs_on_cpu(path: Path):
    require_tool("g++")
    done = run_on_cpu(path)
    if path.stem in GPU_ONLY:
        assert done.returncode != 0 and GPU_ONLY[path.stem] in done.stderr, done.stderr
        return
    if path.stem in NEEDS_CUOBJDUMP and not _have_cuobjdump():
        assert done.returncode != 0, done.stdout
        missing = re.search(r"(cuobjdump|nvdisasm) is not installed", done.stderr)
        assert missing, done.stderr
        return
    assert done.returncode == 0, f"{path.name} failed:\n{done.stdout}\n{done.stderr}"
    if path.stem in DEVICE_SPECIFIC:
        assert "GPU" not in done.stdout.replace("NumPy", ""), done.stdout
        if path.stem == "b1_timing":
            assert "CPU emulation kernel" in done.stdout
        return
    gpu = recorded_output(path.stem)
    assert gpu is not None, (
        f"waiting for the GPU run: no recorded GPU output for {path.name} to compare "
        f"with (it ran on the CPU backend without error).\n{L.WAITING}"
    )
    cpu_lines, gpu_lines = done.stdout.splitlines(), gpu.splitlines()
    assert len(cpu_lines) == len(gpu_lines), f"CPU:\n{done.stdout}\nGPU:\n{gpu}"
    for cpu_line, gpu_line in zip(cpu_lines, gpu_lines, strict=True):
        (c, c_err), (g, g_err) = comparable(cpu_line), comparable(gpu_line)
        assert c == g, f"CPU printed {cpu_line!r}\nGPU printed {gpu_line!r}"
        assert all(e < 1e-4 for e in c_err + g_err), (cpu_line, gpu_line)
