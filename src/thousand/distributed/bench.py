"""B19's measurements, one process per rank (spawned here), written as JSON for the
experiments that will record them on a machine with several GPUs:

    python -m thousand.distributed.bench all-reduce [--world 2] [--largest-mib 1024]
    python -m thousand.distributed.bench gpt [--world 2] [--size large] [--steps 20]

all-reduce: for messages of 4 KiB to --largest-mib, torch.distributed's all_reduce
(NCCL) and the package's two rings, v1 (ProcessRing: a copy kernel and a host
barrier a step) and v2 (DeviceRing: one kernel, device-side flags, pipelined
slots), each timed over repeated calls after warm-up, as nccl-tests reports them:
algorithm bandwidth algbw = bytes / time, bus bandwidth busbw = algbw * 2 (n - 1) / n
(the bytes each GPU's link carries in a ring, so that busbw compares with the
link's speed whatever the number of ranks). Every size is also checked: both rings'
sums against the library's. At 256 MiB v2 is also timed with other block counts.

gpt: the GPT trained on one GPU with --batch rows a step, then data-parallel on
--world GPUs three ways: weak scaling (--batch rows on every GPU, the way data
parallelism is used), strong scaling (--batch rows in all, split: the same global
batches as on one GPU, so the losses must agree step for step) and weak scaling
with ZeRO-1 (sharded AdamW moments; its losses must agree with plain data
parallelism's). Time per step, tokens/s, scaling efficiency (tokens/s on n GPUs over
n times one GPU's), each rank's GPU memory, and one step of rank 0 traced by
PyTorch's profiler: which kernels ran when, the package's and the collective's.

It needs a GPU per rank and refuses to run otherwise: with ranks sharing one GPU (or
on the CPU backend) the figures would say nothing of several GPUs. `--shared-gpu`
runs the code end to end anyway, for testing it, and prints no efficiency.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np

KIB = 1024


def bus_factor(world: int) -> float:
    """busbw / algbw for all_reduce (nccl-tests, PERFORMANCE.md): 2 (n - 1) / n."""
    return 2 * (world - 1) / world


def message_sizes(largest_mib: int) -> list[int]:
    """Bytes: 4 KiB, 16 KiB, ... up to `largest_mib` MiB, by factors of 4."""
    sizes, b = [], 4 * KIB
    while b <= largest_mib * KIB * KIB:
        sizes.append(b)
        b *= 4
    return sizes


SWEEP_BLOCKS = (16, 32, 64, 128)  # DeviceRing's blocks tried at SWEEP_BYTES; the
SWEEP_BYTES = 256 * KIB * KIB  # fastest then runs every size


def _repeat(nbytes: int) -> int:
    """Calls timed per size: many for small messages (microseconds each)."""
    return 50 if nbytes <= 4 * KIB * KIB else 20 if nbytes <= 64 * KIB * KIB else 5


def _rel_error(got, want) -> float:
    scale = max(float(np.abs(want).max()), 1.0)
    return float(np.abs(got - want).max()) / scale


def _all_reduce_rank(rank: int, world: int, folder: str, largest_mib: int):
    import torch
    import torch.distributed as dist

    from thousand.cuda import median, time_ms, to_device
    from thousand.distributed.data_parallel import join
    from thousand.distributed.ring import DeviceRing, ProcessRing

    backend = join(rank, world, f"file://{folder}/rendezvous")
    host = dist.new_group(backend="gloo")  # v1's barriers meet on the host
    v2 = {blocks: DeviceRing(host, blocks) for blocks in SWEEP_BLOCKS}
    timing = {"flush_l2": False, "hold": False}  # see below
    rows, sweep = [], []
    try:
        probe = to_device(np.ones(SWEEP_BYTES // 4, np.float32))
        for blocks, ring in v2.items():
            ms = median(time_ms(partial(ring.all_reduce, probe), repeat=9, **timing))
            sweep.append({"bytes": SWEEP_BYTES, "blocks": blocks, "s": ms / 1e3})
        del probe
        # every rank must pick the same: the slowest rank's times decide
        swept = torch.tensor([w["s"] for w in sweep]).cuda()
        dist.all_reduce(swept, op=dist.ReduceOp.MAX)
        for w, t in zip(sweep, swept.tolist(), strict=True):
            w["s"] = t
        best = min(sweep, key=lambda w: w["s"])["blocks"]
        for nbytes in message_sizes(largest_mib):
            n = nbytes // 4
            data = np.random.default_rng(rank + 17 * n).standard_normal(n)
            data = data.astype(np.float32)
            lib = torch.from_numpy(data).cuda()
            dist.all_reduce(lib)  # the library's sums: what both rings must give
            want = lib.cpu().numpy()
            v1 = ProcessRing(n, group=host)
            one, two = to_device(data), to_device(data)
            v1.all_reduce(one)
            v2[best].all_reduce(two)
            errors = [_rel_error(a.get(), want) for a in (one, two)]
            # each blocks the host or the GPU until every rank is done, and a
            # message is sent again and again: no L2 flush, no held start
            calls = {
                "library": partial(dist.all_reduce, lib),
                "v1": partial(v1.all_reduce, one),
                "v2": partial(v2[best].all_reduce, two),
            }
            row = {"bytes": nbytes, "error_v1": errors[0], "error_v2": errors[1]}
            for who, call in calls.items():
                ms = median(time_ms(call, repeat=_repeat(nbytes), **timing))
                row[f"{who}_s"] = ms / 1e3
            v1.close()
            rows.append(row)
            del lib, one, two
            torch.cuda.empty_cache()
        # the slowest rank's time is the collective's
        keys = ["library_s", "v1_s", "v2_s"]
        times = torch.tensor([[r[k] for k in keys] for r in rows]).cuda()
        dist.all_reduce(times, op=dist.ReduceOp.MAX)
        if rank == 0:
            for r, t in zip(rows, times.tolist(), strict=True):
                r.update(zip(keys, t, strict=True))
            Path(folder, "result.json").write_text(
                json.dumps(
                    {"backend": backend, "rows": rows, "sweep": sweep, "blocks": best}
                )
            )
    finally:
        for ring in v2.values():
            ring.close()
        dist.destroy_process_group()


def all_reduce(world: int, largest_mib: int) -> dict:
    """Spawn `world` ranks; the table of times and bandwidths, rank 0's view."""
    import torch.multiprocessing as mp

    with tempfile.TemporaryDirectory() as folder:
        mp.spawn(_all_reduce_rank, args=(world, folder, largest_mib), nprocs=world)
        out = json.loads(Path(folder, "result.json").read_text())
    for r in out["rows"]:
        for who in ("library", "v1", "v2"):
            algbw = r["bytes"] / r[f"{who}_s"] / 1e9
            r[f"{who}_algbw"], r[f"{who}_busbw"] = algbw, algbw * bus_factor(world)
        r["v1_vs_library"] = r["library_s"] / r["v1_s"]
        r["v2_vs_library"] = r["library_s"] / r["v2_s"]
    for w in out["sweep"]:
        w["busbw"] = w["bytes"] / w["s"] / 1e9 * bus_factor(world)
    wrong = [
        (r["bytes"], v)
        for r in out["rows"]
        for v in ("v1", "v2")
        if not r[f"error_{v}"] < 1e-5
    ]
    if wrong:
        raise RuntimeError(f"a ring's sums differ from the library's at {wrong}")
    out.update(world=world)
    return out


def _gpt_rank(rank, world, folder, size, steps, rows, zero, overlap, tag):
    """One rank of one training run: `rows` global rows a step, split over
    `world` ranks; ZeRO-1 or plain data parallelism."""
    import torch
    import torch.distributed as dist

    from thousand.distributed.data_parallel import (
        DataParallelTrainer,
        ZeroTrainer,
        join,
        shard,
    )
    from thousand.models import gpt

    join(rank, world, f"file://{folder}/rendezvous")
    cfg = gpt.SIZES[size]
    if zero:
        trainer = ZeroTrainer(cfg, gpt.init(cfg, seed=0))
    else:
        trainer = DataParallelTrainer(cfg, gpt.init(cfg, seed=0), overlap=overlap)
    stream, rng = gpt.tokens("train"), np.random.default_rng(0)
    batches = [gpt.lm_batch(stream, rng, rows, cfg.block_size) for _ in range(steps)]
    mine = [shard(b, rank, world) for b in batches]
    losses, times, issue = [], [], []
    for b in mine:
        trainer.sync()
        start = time.perf_counter()
        loss = trainer.step(b, 1e-4)
        issue.append(time.perf_counter() - start)  # the host's part: launches
        trainer.sync()
        times.append(time.perf_counter() - start)
        losses.append(trainer.read(loss))
    free, total = torch.cuda.mem_get_info()
    # one more step, traced on rank 0 (the profiler sees GPU kernels only); every
    # rank takes it, or rank 0's all-reduces would wait for partners in vain
    lanes = _trace_one_step(trainer, mine[-1]) if rank == 0 else None
    if rank != 0:
        trainer.step(mine[-1], 1e-4)
    from thousand.distributed.data_parallel import all_reduce_sum

    losses = all_reduce_sum(np.array(losses)).tolist()  # the ranks' parts
    used = all_reduce_sum(np.array([(total - free) / 2**20])) / world  # MiB
    dist.destroy_process_group()
    if rank == 0:
        Path(folder, f"gpt-{tag}.json").write_text(
            json.dumps(
                {
                    "losses": losses,
                    "step_s": times,
                    "issue_s": issue,
                    "lanes": lanes,
                    "gpu_mib_used": float(used[0]),
                    "moments_mib": _moments_mib(trainer),
                }
            )
        )


def _moments_mib(trainer) -> float:
    """MiB of AdamW moments this rank holds (ZeRO-1 keeps its shard only)."""
    if hasattr(trainer, "m") and not isinstance(trainer.m, list):
        return 2 * trainer.m.nbytes / 2**20
    return sum(a.nbytes for a in trainer.opt.m + trainer.opt.v) / 2**20


def _trace_one_step(trainer, batch) -> dict:
    """Rank 0's GPU activity in one step, from PyTorch's profiler (it sees every
    kernel of the process, the package's too): [name, start_ms, end_ms] in two
    lanes, the collective's kernels and everything else."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    trainer.sync()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        trainer.step(batch, 1e-4)
        trainer.sync()
    gpu = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    gpu.sort(key=lambda e: e.time_range.start)
    t0 = gpu[0].time_range.start if gpu else 0
    lanes = {"collective": [], "compute": []}
    for e in gpu:
        lane = "collective" if "nccl" in e.name.lower() else "compute"
        span = [e.name.split("(", 1)[0][:60], (e.time_range.start - t0) / 1e3]
        lanes[lane].append([*span, (e.time_range.end - t0) / 1e3])
    return lanes


def _share_cores(world: int) -> None:
    """Each rank's thread pools (OpenMP, OpenBLAS, PyTorch's) get its share of the
    cores, set before the spawned ranks import NumPy; by default each would start
    a thread per core, and idle threads that spin for work crowd out the ranks'
    launching threads."""
    import os

    share = str(max(1, (os.cpu_count() or 1) // world))
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, share)


def _spawn_gpt(world, folder, size, steps, rows, zero, overlap, tag) -> dict:
    import torch.multiprocessing as mp

    _share_cores(world)
    args = (world, folder, size, steps, rows, zero, overlap, tag)
    mp.spawn(_gpt_rank, args=args, nprocs=world)
    run = json.loads(Path(folder, f"gpt-{tag}.json").read_text())
    run["median_step_s"] = float(np.median(run["step_s"][2:]))  # first: compiles
    run["median_issue_s"] = float(np.median(run["issue_s"][2:]))
    run["rows"], run["world"] = rows, world
    return run


def _gap(a: list, b: list) -> float:
    """The largest relative difference of two loss curves, step for step."""
    return max(abs(x - y) / abs(x) for x, y in zip(a, b, strict=True))


def gpt_scaling(world: int, size: str, steps: int, batch: int, overlap=True) -> dict:
    """One GPU with `batch` rows a step; then `world` GPUs: weak (`batch` rows on
    each), strong (`batch` rows in all) and weak with ZeRO-1."""
    from thousand.models import gpt

    block = gpt.SIZES[size].block_size
    with tempfile.TemporaryDirectory() as folder:
        go = partial(_spawn_gpt, folder=folder, size=size, steps=steps)
        runs = {
            "one": go(1, rows=batch, zero=False, overlap=overlap, tag="one"),
            "weak": go(
                world, rows=world * batch, zero=False, overlap=overlap, tag="weak"
            ),
            "strong": go(world, rows=batch, zero=False, overlap=overlap, tag="strong"),
            "zero": go(world, rows=world * batch, zero=True, overlap=False, tag="zero"),
        }
    for run in runs.values():
        run["tokens_s"] = run["rows"] * block / run["median_step_s"]
    one = runs["one"]["tokens_s"]
    return {
        "world": world,
        "size": size,
        "batch": batch,
        "overlap": overlap,
        "runs": runs,
        "weak_efficiency": runs["weak"]["tokens_s"] / (world * one),
        "strong_efficiency": runs["strong"]["tokens_s"] / (world * one),
        "zero_efficiency": runs["zero"]["tokens_s"] / (world * one),
        "strong_loss_gap": _gap(runs["one"]["losses"], runs["strong"]["losses"]),
        "zero_loss_gap": _gap(runs["weak"]["losses"], runs["zero"]["losses"]),
    }


def _positive(name: str, least: int = 1):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            why = f"{name} takes a whole number, got {text!r}"
            raise argparse.ArgumentTypeError(why) from None
        if value < least:
            raise argparse.ArgumentTypeError(
                f"{name} must be at least {least}, got {value}"
            )
        return value

    return parse


def _parse(argv) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m thousand.distributed.bench")
    ap.add_argument("what", choices=["all-reduce", "gpt"])
    ap.add_argument("--world", type=_positive("--world", 2), default=2)
    ap.add_argument("--largest-mib", type=_positive("--largest-mib"), default=1024)
    ap.add_argument("--size", default="large")
    ap.add_argument("--steps", type=_positive("--steps", 3), default=20)
    ap.add_argument("--batch", type=_positive("--batch"), default=64)
    ap.add_argument("--no-overlap", action="store_true")
    ap.add_argument(
        "--shared-gpu",
        action="store_true",
        help="let ranks share a GPU: tests the code, measures nothing",
    )
    ap.add_argument("--out", type=Path, help="write the result here as JSON")
    a = ap.parse_args(argv)
    if a.out is not None:
        folder = a.out.resolve().parent
        if not folder.is_dir():
            ap.error(f"--out {a.out}: the folder {folder} does not exist")
        if a.out.is_dir():
            ap.error(f"--out {a.out} is a folder; name a file to write")
        if a.out.exists():
            ap.error(f"--out {a.out} exists; this bench writes only new files")
    if a.what == "gpt":
        from thousand.models import gpt

        if a.size not in gpt.SIZES:
            ap.error(f"--size {a.size!r}: one of {', '.join(gpt.SIZES)}")
        if a.batch % a.world:
            ap.error(f"--batch {a.batch} does not split into {a.world} equal shares")
    return a


def _gpus(world: int, shared: bool) -> tuple[int, str]:
    """The GPUs torch sees, or a reason the bench cannot measure here."""
    import os

    if os.environ.get("THOUSAND_BACKEND", "").lower() == "cpu":
        return 0, "THOUSAND_BACKEND=cpu: the bench measures GPUs"
    try:
        import torch
    except ImportError:
        return 0, "PyTorch is not installed (pip install torch)"
    count = torch.cuda.device_count()
    if count >= world or (shared and count >= 1):
        return count, ""
    return count, f"{world} ranks need {world} GPUs; this machine has {count}"


def topology() -> str:
    """`nvidia-smi topo -m`: how the GPUs are linked (NV18 = 18 NVLinks)."""
    import subprocess

    try:
        done = subprocess.run(
            ["nvidia-smi", "topo", "-m"], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"(nvidia-smi topo -m failed: {e})"
    return done.stdout.strip() or done.stderr.strip()


def _print_all_reduce(out: dict) -> None:
    print(
        f"{'bytes':>12} {'NCCL busbw':>11} {'v1 busbw':>9} {'v2 busbw':>9} "
        f"{'v1/NCCL':>8} {'v2/NCCL':>8}"
    )
    for r in out["rows"]:
        print(
            f"{r['bytes']:>12} {r['library_busbw']:>11.1f} {r['v1_busbw']:>9.1f} "
            f"{r['v2_busbw']:>9.1f} {r['v1_vs_library']:>8.3f} "
            f"{r['v2_vs_library']:>8.3f}"
        )
    print(f"v2 ran with {out['blocks']} blocks, the fastest in this sweep:")
    for w in out["sweep"]:
        print(
            f"v2 with {w['blocks']:>3} blocks at {w['bytes']} B: "
            f"{w['busbw']:.1f} GB/s bus bandwidth"
        )


def _print_gpt(out: dict, shared: bool) -> None:
    for name, run in out["runs"].items():
        print(
            f"{name:>6}: {run['world']} GPU(s), {run['rows']} rows a step: "
            f"{run['median_step_s'] * 1e3:.2f} ms (host issues it in "
            f"{run['median_issue_s'] * 1e3:.2f} ms), {run['tokens_s']:,.0f} tokens/s, "
            f"{run['gpu_mib_used']:,.0f} MiB a GPU, "
            f"moments {run['moments_mib']:.1f} MiB"
        )
    print(
        f"loss gaps: strong vs one GPU {out['strong_loss_gap']:.1e}, "
        f"ZeRO-1 vs plain {out['zero_loss_gap']:.1e}"
    )
    if shared:
        print(
            "(ranks shared one GPU: no scaling efficiency, these times measure nothing)"
        )
        return
    print(
        f"scaling efficiency: weak {out['weak_efficiency']:.1%}, strong "
        f"{out['strong_efficiency']:.1%}, weak with ZeRO-1 {out['zero_efficiency']:.1%}"
    )


def main(argv=None) -> int:
    a = _parse(argv)
    count, why = _gpus(a.world, a.shared_gpu)
    if why:
        print(f"python -m thousand.distributed.bench: {why}", file=sys.stderr)
        return 2
    if a.what == "all-reduce":
        if count < a.world:
            print(
                "all-reduce needs a GPU per rank (NCCL), even with --shared-gpu",
                file=sys.stderr,
            )
            return 2
        _share_cores(a.world)
        out = all_reduce(a.world, a.largest_mib)
        _print_all_reduce(out)
    else:
        out = gpt_scaling(a.world, a.size, a.steps, a.batch, not a.no_overlap)
        _print_gpt(out, count < a.world)
    import torch

    out.update(
        shared_gpu=count < a.world,
        gpus=[torch.cuda.get_device_name(i) for i in range(count)],
        topology=topology(),
        command="python -m thousand.distributed.bench "
        + " ".join(argv or sys.argv[1:]),
    )
    if a.out:
        a.out.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
