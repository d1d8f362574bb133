"""Memory-access pictures: the addresses one warp touches, traced on the CPU backend.

The checked build calls the runtime on every load and store; with a Trace attached,
the runtime records the accesses of the first block. Here we take one warp and one
instruction (a source line of the kernel) and summarise what the hardware would see:

- global memory: the 32-byte sectors and 128-byte lines the warp's addresses fall in;
  bytes the warp asked for / bytes in those sectors = how much of the traffic is used
- shared memory: the bank of each lane's word (32 banks of 4 bytes); lanes that hit
  the same bank at different words are serialised: the worst bank's count is the
  n-way conflict

A LaunchMap traces every block of a small 2-D launch instead: which block and which
thread stored to each element of the output (B3's picture of the thread hierarchy).

`python -m thousand.cpu.pictures` writes docs/assets/access/<name>.json; the site
draws them (site/render.py), and a CPU test checks the files match the kernels.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from thousand.cuda import to_device, use_backend

from . import engine

ROOT = Path(__file__).resolve().parents[3]
OUT_DIR = ROOT / "docs" / "assets" / "access"
SECTOR, LINE, BANKS = 32, 128, 32


@dataclass(frozen=True)
class Panel:
    """One traced launch, and which access of warp 0 in block 0 to draw."""

    title: str
    family: str
    kernel: str
    make_args: callable  # () -> (grid, block, args, shared)
    space: str  # "global" or "shared"
    write: bool  # the load or the store of `buffer`
    buffer: str | None = None  # the global buffer's parameter name
    occurrence: int = 0  # which execution of that instruction by each lane


@dataclass(frozen=True)
class LaunchMap:
    """One traced 2-D launch, every block: who stored to each element of `buffer`,
    a (rows, cols) array of ints (of planes of them: the first plane is drawn)."""

    title: str
    family: str
    kernel: str
    make_args: callable  # () -> (grid, block, args, shared)
    buffer: str  # the output's parameter name
    shape: tuple[int, int]  # (rows, cols) of the array the launch covers
    # Where the output holds what each thread says it is (block_x: plane k, ...),
    # to check the trace against; {} for an output of anything else.
    planes: dict = field(default_factory=dict)


def _neuron_layer(n_out=64, n_in=40):
    def make():
        W = to_device(np.zeros((n_out, n_in), np.float32))
        x = to_device(np.zeros(n_in, np.float32))
        b = to_device(np.zeros(n_out, np.float32))
        y = to_device(np.zeros(n_out, np.float32))
        ints = (np.int32(n_out), np.int32(n_in))
        return (1,), (64,), (W, x, b, y, *ints), 0

    return make


def _transpose(rows=64, cols=64):
    def make():
        a = to_device(np.zeros((rows, cols), np.float32))
        out = to_device(np.zeros((cols, rows), np.float32))
        return (2, 2), (32, 8), (a, out, np.int32(rows), np.int32(cols)), 0

    return make


def _vector_add(n=100):
    def make():
        x, y, out = (to_device(np.zeros(n, np.float32)) for _ in range(3))
        return (4,), (32,), (x, y, out, np.int32(n)), 0

    return make


def _coordinates(rows=5, cols=10, block=(4, 2)):
    def make():
        out = to_device(np.full((6, rows, cols), -1, np.int32))
        grid = (-(-cols // block[0]), -(-rows // block[1]))
        return grid, block, (out, np.int32(rows), np.int32(cols)), 0

    return make


PICTURES = {
    "coordinates-2d": [
        LaunchMap(
            "coordinates_v2",
            "coordinates",
            "coordinates_v2",
            _coordinates(),
            "out",
            (5, 10),
            # coordinates.PLANES: blockIdx.x, .y, .z, threadIdx.x, .y, .z
            {"block_x": 0, "block_y": 1, "thread_x": 3, "thread_y": 4},
        ),
    ],
    "vector-add-indexing": [
        Panel(
            "vector_add_v2: x[i]",
            "vector_add",
            "vector_add_v2",
            _vector_add(),
            "global",
            False,
            "x",
        ),
    ],
    "neuron-layer-coalescing": [
        Panel(
            "neuron_layer_v1: W[j * n_in + k]",
            "neuron_layer",
            "neuron_layer_v1",
            _neuron_layer(),
            "global",
            False,
            "W",
        ),
        Panel(
            "neuron_layer_v2: W[j * n_in + k]",
            "neuron_layer",
            "neuron_layer_v2",
            _neuron_layer(),
            "global",
            False,
            "W",
        ),
    ],
    "transpose-global": [
        Panel(
            "transpose_v1: write out[x * rows + y]",
            "transpose",
            "transpose_v1",
            _transpose(),
            "global",
            True,
            "out",
        ),
        Panel(
            "transpose_v3: write out[oy * rows + ox]",
            "transpose",
            "transpose_v3",
            _transpose(),
            "global",
            True,
            "out",
        ),
    ],
    "transpose-banks": [
        Panel(
            "transpose_v2: read tile[threadIdx.x][dy]",
            "transpose",
            "transpose_v2",
            _transpose(),
            "shared",
            False,
        ),
        Panel(
            "transpose_v3: read tile[threadIdx.x][dy], padded",
            "transpose",
            "transpose_v3",
            _transpose(),
            "shared",
            False,
        ),
    ],
}


def source_line(lib: Path, site: int) -> str:
    """'file.cu:42' for a return address inside the checked build (needs binutils)."""
    tool = shutil.which("addr2line")
    if not tool:
        return "?"
    out = subprocess.run(
        [tool, "-e", str(lib), hex(site - 1)], capture_output=True, text=True
    ).stdout.strip()
    path, _, line = out.rpartition(":")
    return f"{Path(path).name}:{line.split()[0]}" if line else "?"


def trace(panel: Panel) -> engine.Trace:
    grid, block, args, shared = panel.make_args()
    t = engine.Trace(blocks=1)
    engine.launch(
        panel.family, panel.kernel, grid, block, *args, shared=shared, trace=t
    )
    return t


def warp_access(panel: Panel, t: engine.Trace) -> dict:
    """The chosen instruction of warp 0: per lane, its offset; and the summary."""
    r = t.records
    warp = r[(r["thread"] < 32) & (r["write"] == int(panel.write))]
    if panel.space == "shared":
        warp = warp[warp["shared"] == 1]
    else:
        index = t.buffer_names.index(panel.buffer)
        warp = warp[(warp["shared"] == 0) & (warp["buffer"] == index)]
    if not len(warp):
        raise ValueError(f"{panel.kernel}: warp 0 made no such access")
    site = int(warp["site"][0])  # the first such instruction in program order
    lanes = {}
    for rec in warp[warp["site"] == site]:
        seen = lanes.setdefault(int(rec["thread"]), [])
        seen.append((int(rec["offset"]), int(rec["size"])))
    picked = {
        lane: acc[panel.occurrence]
        for lane, acc in lanes.items()
        if len(acc) > panel.occurrence
    }
    offsets = [picked[lane][0] for lane in sorted(picked)]
    size = picked[min(picked)][1]
    entry = {
        "title": panel.title,
        "kernel": panel.kernel,
        "space": panel.space,
        "write": panel.write,
        "line": source_line(Path(t.module.lib._name), site),
        "lanes": sorted(picked),
        "offsets": offsets,
        "bytes": size,
    }
    if panel.space == "global":
        sectors = {o // SECTOR for o in offsets} | {
            (o + size - 1) // SECTOR for o in offsets
        }
        lines = {o // LINE for o in offsets}
        entry |= {
            "sectors": len(sectors),
            "lines": len(lines),
            "efficiency": len(offsets) * size / (len(sectors) * SECTOR),
        }
    else:
        words = {o // 4 for o in offsets}
        per_bank = Counter(w % BANKS for w in words)  # distinct words per bank
        entry |= {
            "banks": [o // 4 % BANKS for o in offsets],
            "conflict": max(per_bank.values()),
        }
    return entry


def launch_map(m: LaunchMap) -> dict:
    """Trace every block; for each element, the block and thread whose store landed
    there, checked against what the kernel wrote (its own blockIdx and threadIdx)."""
    grid, block, args, shared = m.make_args()
    grid, block = (
        tuple(grid) + (1,) * (3 - len(grid)),
        tuple(block) + (1,) * (3 - len(block)),
    )
    if grid[2] != 1 or block[2] != 1:
        raise ValueError(f"{m.kernel}: a launch map draws 2-D launches only")
    t = engine.Trace(blocks=int(np.prod(grid)))
    engine.launch(m.family, m.kernel, grid, block, *args, shared=shared, trace=t)
    r = t.records
    index = t.buffer_names.index(m.buffer)
    stores = r[(r["write"] == 1) & (r["shared"] == 0) & (r["buffer"] == index)]
    rows, cols = m.shape
    owners: dict[int, set] = {}
    for rec in stores:  # every plane of element e is stored by e's one owner
        e = int(rec["offset"]) // int(rec["size"]) % (rows * cols)
        owners.setdefault(e, set()).add((int(rec["block"]), int(rec["thread"])))
    if any(len(who) != 1 for who in owners.values()):
        raise ValueError(f"{m.kernel}: an element was stored by two threads")
    blocks = np.full((rows, cols), -1)
    threads = np.full((rows, cols), -1)
    for e, ((b, th),) in owners.items():
        blocks.flat[e], threads.flat[e] = b, th
    entry = {
        "title": m.title,
        "kernel": m.kernel,
        "space": "launch",
        "line": source_line(Path(t.module.lib._name), int(stores["site"][0])),
        "grid": list(grid[:2]),
        "block": list(block[:2]),
        "shape": [rows, cols],
        # -1: no thread stored there (a bug in the launch: the picture shows it)
        "block_x": np.where(blocks < 0, -1, blocks % grid[0]).tolist(),
        "block_y": np.where(blocks < 0, -1, blocks // grid[0]).tolist(),
        "thread_x": np.where(threads < 0, -1, threads % block[0]).tolist(),
        "thread_y": np.where(threads < 0, -1, threads // block[0]).tolist(),
    }
    if m.planes:  # the kernel stored its own blockIdx and threadIdx: must agree
        pointers = [a for a in args if not isinstance(a, np.generic)]
        written = pointers[index].get().reshape(-1, rows, cols)
        for key, plane in m.planes.items():
            if not np.array_equal(written[plane], entry[key]):
                raise ValueError(f"{m.kernel}: {key} traced and written disagree")
    return entry


def record(panel) -> dict:
    if isinstance(panel, LaunchMap):
        return launch_map(panel)
    return warp_access(panel, trace(panel))


def record_all() -> dict[str, list[dict]]:
    before = use_backend("cpu")
    try:
        return {name: [record(p) for p in panels] for name, panels in PICTURES.items()}
    finally:
        use_backend(before)


def write(out_dir: Path = OUT_DIR) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, panels in record_all().items():
        path = out_dir / f"{name}.json"
        path.write_text(json.dumps({"name": name, "panels": panels}, indent=1) + "\n")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(
        prog="python -m thousand.cpu.pictures",
        description="Trace which addresses one warp touches on the CPU backend and "
        f"write the pictures' data to {OUT_DIR.relative_to(ROOT)}/*.json.",
    ).parse_args(argv)  # no options: --help, and anything else refused
    for path in write():
        data = json.loads(path.read_text())
        for p in data["panels"]:
            if p["space"] == "launch":
                extra = f"grid {p['grid']} of blocks {p['block']} over {p['shape']}"
            elif p["space"] == "global":
                extra = (
                    f"{p['sectors']} sectors, {p['lines']} lines, "
                    f"{100 * p['efficiency']:.0f}% used"
                )
            else:
                extra = f"{p['conflict']}-way bank conflict"
            print(f"{path.name}: {p['title']} ({p['line']}): {extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
