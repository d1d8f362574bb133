"""B19's recorded runs: what post B19 shows, measured on one machine of several GPUs.

    python -m thousand.distributed.record --world 2 [--out-dir DIR]

runs the all-reduce bench (NCCL and both rings, 4 KiB to 1 GiB) and the GPT's data
parallelism (weak, strong, ZeRO-1) on `--world` GPUs of this machine, and writes
`several-gpus/<gpu>-x<world>.json` under docs/assets/results (or DIR): the device,
how its GPUs are linked (`nvidia-smi topo -m`), the run's date, commit and software,
a fingerprint of the code that ran, and three experiment results in the schema of
thousand.experiments (lines, bars, timeline), which the site draws with
`<!-- results:gpus NAME -->`.

These records are apart from the per-GPU ledger (docs/assets/results/<gpu>.json):
that one is written by `python -m thousand.bench` on a machine of one GPU, and a
machine of several is another device. The CPU tests hold each record's fingerprint
to the sources, as the ledger's, so a changed ring fails CI until it is run again.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
from pathlib import Path

from thousand.bench import fingerprint as F
from thousand.bench import ledger as L
from thousand.experiments import Experiment, Note, validate

RECORDS_DIR = L.RESULTS_DIR / "several-gpus"
BATCHES = (64, 256)  # rows a GPU: the A16 step is host-bound at 64, not at 256

MIB = 2**20
BUS = "bus bandwidth (GB/s)"
ZH = {
    BUS: "总线带宽 (GB/s)",
    "message (bytes)": "消息大小 (字节)",
    "NCCL (PyTorch all_reduce)": "NCCL (PyTorch all_reduce)",
    "ring v1: a copy kernel and a host barrier a step": (
        "环 v1：每步一次拷贝核函数和一次主机屏障"
    ),
    "ring v2: one kernel, flags on the GPU": "环 v2：一个核函数，标志位在 GPU 上",
    "tokens/s": "词元/秒",
    "how the batch was spread": "批的分法",
    "1 GPU": "1 块 GPU",
    "weak scaling": "弱扩展",
    "strong scaling": "强扩展",
    "weak scaling, ZeRO-1": "弱扩展，ZeRO-1",
    "collective": "集合通信",
    "compute": "计算",
}
V1 = "ring v1: a copy kernel and a host barrier a step"
V2 = "ring v2: one kernel, flags on the GPU"
NCCL = "NCCL (PyTorch all_reduce)"


def fingerprint() -> str:
    """What the figures depend on, by behaviour (thousand.bench.fingerprint): this
    module and all it imports, the benches, the rings with ring.cu, data
    parallelism, the GPT and its kernels."""
    return F.fingerprint([Path(__file__).resolve()], L.SRC)


def experiments(world: int) -> dict[str, Experiment]:
    """The three results of a record of `world` GPUs, by name."""
    x = f"x{world}"
    allreduce = Experiment(
        name=f"b19-all-reduce-{x}",
        title={
            "zh": f"{world} 块 GPU 上的 all-reduce：总线带宽随消息大小",
            "en": f"All-reduce on {world} GPUs: bus bandwidth over message size",
        },
        run=lambda quick: {},
        notes={
            "v2_256": Note("v2 ÷ NCCL，256 MiB", "v2 / NCCL at 256 MiB", "{:.2f}"),
            "v2_1024": Note("v2 ÷ NCCL，1 GiB", "v2 / NCCL at 1 GiB", "{:.2f}"),
            "v1_1024": Note("v1 ÷ NCCL，1 GiB", "v1 / NCCL at 1 GiB", "{:.2f}"),
            "v2_small": Note(
                "v2 ÷ NCCL，4 KiB–1 MiB 中最低",
                "v2 / NCCL, lowest of 4 KiB-1 MiB",
                "{:.2f}",
            ),
            "nccl_1024": Note(
                "NCCL 总线带宽，1 GiB (GB/s)",
                "NCCL bus bandwidth at 1 GiB (GB/s)",
                "{:.0f}",
            ),
            "blocks": Note(
                "v2 的线程块数（扫描中最快）",
                "v2's blocks (fastest in the sweep)",
                "{:.0f}",
            ),
        },
        zh=ZH,
    )
    found = {allreduce.name: allreduce}
    for batch in BATCHES:
        found.update(_gpt_experiments(world, batch))
    return found


def _gpt_experiments(world: int, batch: int) -> dict[str, Experiment]:
    """The GPT's throughput and one traced step, at `batch` rows a GPU."""
    x = f"x{world}-b{batch}"
    notes = {
        "weak": ("弱扩展效率", "weak scaling efficiency", "{:.1%}"),
        "strong": ("强扩展效率", "strong scaling efficiency", "{:.1%}"),
        "zero": ("ZeRO-1 的弱扩展效率", "weak scaling efficiency, ZeRO-1", "{:.1%}"),
        "strong_gap": (
            "强扩展与单卡的损失最大相对差",
            "largest loss gap, strong scaling vs one GPU",
            "{:.1e}",
        ),
        "zero_gap": (
            "ZeRO-1 与普通数据并行的损失最大相对差",
            "largest loss gap, ZeRO-1 vs plain data parallelism",
            "{:.1e}",
        ),
        "moments": ("每卡 AdamW 矩，普通 (MiB)", "AdamW moments a GPU, plain (MiB)"),
        "zero_moments": (
            "每卡 AdamW 矩，ZeRO-1 (MiB)",
            "AdamW moments a GPU, ZeRO-1 (MiB)",
        ),
        "gpu_mib": ("每卡显存占用，普通 (MiB)", "GPU memory a GPU, plain (MiB)"),
        "zero_gpu_mib": (
            "每卡显存占用，ZeRO-1 (MiB)",
            "GPU memory a GPU, ZeRO-1 (MiB)",
        ),
        "one_ms": ("单卡一步 (ms)", "one GPU, a step (ms)"),
        "one_issue_ms": (
            "单卡主机发出一步 (ms)",
            "one GPU, the host issues a step (ms)",
        ),
        "weak_ms": ("弱扩展一步 (ms)", "weak scaling, a step (ms)"),
        "weak_issue_ms": (
            "弱扩展主机发出一步 (ms)",
            "weak scaling, the host issues a step (ms)",
        ),
        "busy_ms": (
            "追踪的一步中 rank 0 计算核函数忙碌 (ms)",
            "rank 0's compute kernels busy in the traced step (ms)",
        ),
    }
    gpt = Experiment(
        name=f"b19-gpt-{x}",
        title={
            "zh": f"数据并行的 GPT（A16 large，每卡 {batch} 行）："
            f"1 块与 {world} 块 GPU",
            "en": f"Data-parallel GPT (A16 large, {batch} rows a GPU): "
            f"1 and {world} GPUs",
        },
        run=lambda quick: {},
        notes={
            k: Note(v[0], v[1], v[2] if len(v) > 2 else "{:,.1f}")
            for k, v in notes.items()
        },
        zh=ZH,
    )
    timeline = Experiment(
        name=f"b19-timeline-{x}",
        title={
            "zh": f"弱扩展的一步（每卡 {batch} 行），rank 0 的 GPU 时间线，"
            f"{world} 块 GPU",
            "en": f"One weak-scaling step ({batch} rows a GPU), rank 0's GPU timeline, "
            f"{world} GPUs",
        },
        run=lambda quick: {},
        zh=ZH,
    )
    return {gpt.name: gpt, timeline.name: timeline}


def results(world: int, ar: dict, dp: dict) -> dict[str, dict]:
    """The bench's outputs as experiment results."""
    rows = ar["rows"]
    by = {r["bytes"]: r for r in rows}
    small = [r["v2_vs_library"] for r in rows if r["bytes"] <= MIB]
    x = f"x{world}"
    found = {
        f"b19-all-reduce-{x}": {
            "kind": "lines",
            "x": {
                "label": "message (bytes)",
                "values": [r["bytes"] for r in rows],
                "log": True,
            },
            "y": {"label": BUS, "log": True, "format": "{:,.1f}"},
            "series": {
                NCCL: [r["library_busbw"] for r in rows],
                V1: [r["v1_busbw"] for r in rows],
                V2: [r["v2_busbw"] for r in rows],
            },
            "notes": {
                "v2_256": by[256 * MIB]["v2_vs_library"],
                "v2_1024": by[1024 * MIB]["v2_vs_library"],
                "v1_1024": by[1024 * MIB]["v1_vs_library"],
                "v2_small": min(small),
                "nccl_1024": by[1024 * MIB]["library_busbw"],
                "blocks": ar["blocks"],
            },
        },
    }
    for batch, out in dp.items():
        found.update(_gpt_results(world, batch, out))
    return found


def _gpt_results(world: int, batch: int, dp: dict) -> dict[str, dict]:
    runs = dp["runs"]
    lanes = runs["weak"]["lanes"]
    busy = sum(end - start for _, start, end in lanes["compute"])
    x = f"x{world}-b{batch}"
    kinds = ("one", "weak", "strong", "zero")
    return {
        f"b19-gpt-{x}": {
            "kind": "bars",
            "x": {
                "label": "how the batch was spread",
                "values": [
                    "1 GPU",
                    "weak scaling",
                    "strong scaling",
                    "weak scaling, ZeRO-1",
                ],
            },
            "y": {"label": "tokens/s", "format": "{:,.0f}"},
            "series": {"tokens/s": [runs[k]["tokens_s"] for k in kinds]},
            "notes": {
                "weak": dp["weak_efficiency"],
                "strong": dp["strong_efficiency"],
                "zero": dp["zero_efficiency"],
                "strong_gap": dp["strong_loss_gap"],
                "zero_gap": dp["zero_loss_gap"],
                "moments": runs["weak"]["moments_mib"],
                "zero_moments": runs["zero"]["moments_mib"],
                "gpu_mib": runs["weak"]["gpu_mib_used"],
                "zero_gpu_mib": runs["zero"]["gpu_mib_used"],
                "one_ms": runs["one"]["median_step_s"] * 1e3,
                "one_issue_ms": runs["one"]["median_issue_s"] * 1e3,
                "weak_ms": runs["weak"]["median_step_s"] * 1e3,
                "weak_issue_ms": runs["weak"]["median_issue_s"] * 1e3,
                "busy_ms": busy,
            },
        },
        f"b19-timeline-{x}": {"kind": "timeline", "lanes": lanes, "notes": {}},
    }


def _software() -> dict:
    import numpy
    import torch

    nccl = ".".join(map(str, torch.cuda.nccl.version()))
    return {"torch": torch.__version__, "nccl": nccl, "numpy": numpy.__version__}


def _commit() -> str:
    """THOUSAND_COMMIT where the checkout is a copy without git, else HEAD."""
    import os

    if os.environ.get("THOUSAND_COMMIT"):
        return os.environ["THOUSAND_COMMIT"]
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=L.ROOT,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() or "unknown"


def record(world: int, out_dir: Path) -> Path:
    """Run both benches on `world` GPUs and write the record; returns its path."""
    import torch

    from thousand.distributed import bench

    count = torch.cuda.device_count()
    if count < world:
        raise SystemExit(f"record: {world} GPUs wanted, this machine has {count}")
    bench._share_cores(world)
    ar = bench.all_reduce(world, 1024)
    dp = {b: bench.gpt_scaling(world, "large", 20, b) for b in BATCHES}
    name = torch.cuda.get_device_name(0)
    out_dir.mkdir(parents=True, exist_ok=True)
    raw = out_dir / f"{L.slug(name)}-x{world}.raw.json"  # kept if validation fails
    raw.write_text(
        json.dumps({"all_reduce": ar, "gpt": {str(b): d for b, d in dp.items()}})
    )
    found = results(world, ar, dp)
    for exp_name, e in experiments(world).items():
        validate(e, found[exp_name])
    raw.unlink()
    doc = {
        "schema": 1,
        "device": {"name": name, "count": world, "topology": bench.topology()},
        "run": {
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": _commit(),
            "command": f"python -m thousand.distributed.record --world {world}",
            **_software(),
        },
        "fingerprint": fingerprint(),
        "results": found,
        "raw": {"all_reduce": ar, "gpt": {str(b): out for b, out in dp.items()}},
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{L.slug(name)}-x{world}.json"
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return path


def records() -> dict[str, dict]:
    """Every committed record, by experiment name: (record, result, Experiment)."""
    found = {}
    for path in sorted(RECORDS_DIR.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        exps = experiments(doc["device"]["count"])
        for name, result in doc["results"].items():
            found[name] = {"record": doc, "result": result, "experiment": exps[name]}
    return found


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m thousand.distributed.record")
    ap.add_argument("--world", type=int, default=2, help="GPUs to use (at least 2)")
    ap.add_argument("--out-dir", type=Path, default=RECORDS_DIR)
    a = ap.parse_args(argv)
    if a.world < 2:
        ap.error(f"--world must be at least 2, got {a.world}")
    if a.out_dir.exists() and not a.out_dir.is_dir():
        ap.error(f"--out-dir {a.out_dir} is a file")
    print(record(a.world, a.out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
