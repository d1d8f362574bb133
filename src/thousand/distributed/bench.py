"""B19's measurements, one process per rank (spawned here), written as JSON for the
experiments that will record them on a machine with several GPUs:

    python -m thousand.distributed.bench all-reduce [--world 2] [--largest-mib 1024]
    python -m thousand.distributed.bench gpt [--world 2] [--size large] [--steps 20]

all-reduce: for messages of 4 KiB to --largest-mib, torch.distributed's all_reduce
(NCCL when every rank has a GPU) and the package's ProcessRing, each timed over
repeated calls after warm-up, as nccl-tests reports them: algorithm bandwidth
algbw = bytes / time, bus bandwidth busbw = algbw * 2 (n - 1) / n (the bytes each
GPU's link carries in a ring, so that busbw compares with the link's speed whatever
the number of ranks). Every size is also checked: the ring's sums against the
library's.

gpt: the GPT trained on one GPU, then data-parallel on --world, on the same
global batch: time per step, tokens/s, scaling efficiency (tokens/s on n GPUs over
n times one GPU's), each step's loss (the same curve, step for step), and one step
of rank 0 traced by PyTorch's profiler: which kernels ran when, the package's and
the collective's (overlap).

With fewer GPUs than ranks the ranks share GPU 0 and talk through gloo: the code
runs end to end, but the figures say nothing about several GPUs (`shared_gpu` is
then true in the output).
"""

from __future__ import annotations

import argparse
import json
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


def _repeat(nbytes: int) -> int:
    """Calls timed per size: many for small messages (microseconds each)."""
    return 50 if nbytes <= 4 * KIB * KIB else 20 if nbytes <= 64 * KIB * KIB else 5


def _all_reduce_rank(rank: int, world: int, folder: str, largest_mib: int):
    import torch
    import torch.distributed as dist

    from thousand.cuda import median, time_ms, to_device
    from thousand.distributed.data_parallel import join
    from thousand.distributed.ring import ProcessRing

    backend = join(rank, world, f"file://{folder}/rendezvous")
    host = dist.new_group(backend="gloo")  # the ring's barriers meet on the host
    rows = []
    try:
        for nbytes in message_sizes(largest_mib):
            n = nbytes // 4
            data = np.random.default_rng(rank + 17 * n).standard_normal(n)
            data = data.astype(np.float32)
            lib = torch.from_numpy(data).cuda()
            ring = ProcessRing(n, group=host)
            check = to_device(data)
            ring.all_reduce(check)  # one call on the data, against the library's
            dist.all_reduce(lib)
            scale = max(float(lib.abs().max()), 1.0)
            err = float(np.abs(check.get() - lib.cpu().numpy()).max()) / scale
            # both block the host until done (a collective waits for every rank),
            # and a message is sent again and again: no L2 flush, no held start
            timing = {"repeat": _repeat(nbytes), "flush_l2": False, "hold": False}
            lib_ms = median(time_ms(partial(dist.all_reduce, lib), **timing))
            ring_ms = median(time_ms(partial(ring.all_reduce, check), **timing))
            ring.close()
            rows.append(
                {
                    "bytes": nbytes,
                    "library_s": lib_ms / 1e3,
                    "ring_s": ring_ms / 1e3,
                    "error": err,
                }
            )
            del lib, check
            torch.cuda.empty_cache()
        # the slowest rank's time is the collective's
        times = torch.tensor([[r["library_s"], r["ring_s"]] for r in rows]).cuda()
        dist.all_reduce(times, op=dist.ReduceOp.MAX)
        if rank == 0:
            for r, (lib_s, ring_s) in zip(rows, times.tolist(), strict=True):
                r["library_s"], r["ring_s"] = lib_s, ring_s
            Path(folder, "result.json").write_text(
                json.dumps({"backend": backend, "rows": rows})
            )
    finally:
        dist.destroy_process_group()


def all_reduce(world: int, largest_mib: int) -> dict:
    """Spawn `world` ranks; the table of times and bandwidths, rank 0's view."""
    import torch
    import torch.multiprocessing as mp

    with tempfile.TemporaryDirectory() as folder:
        mp.spawn(_all_reduce_rank, args=(world, folder, largest_mib), nprocs=world)
        out = json.loads(Path(folder, "result.json").read_text())
    for r in out["rows"]:
        for who in ("library", "ring"):
            algbw = r["bytes"] / r[f"{who}_s"] / 1e9
            r[f"{who}_algbw"], r[f"{who}_busbw"] = algbw, algbw * bus_factor(world)
        r["ring_vs_library"] = r["library_s"] / r["ring_s"]
    wrong = [r["bytes"] for r in out["rows"] if not r["error"] < 1e-5]
    if wrong:
        raise RuntimeError(f"the ring's sums differ from the library's at {wrong} B")
    out.update(world=world, shared_gpu=torch.cuda.device_count() < world)
    return out


def _gpt_rank(rank, world, folder, size, steps, batch, overlap):
    import torch.distributed as dist

    from thousand.cuda import on_cpu
    from thousand.distributed.data_parallel import DataParallelTrainer, join, shard
    from thousand.models import gpt

    if world > 1:
        join(rank, world, f"file://{folder}/rendezvous")
    cfg = gpt.SIZES[size]
    trainer = DataParallelTrainer(cfg, gpt.init(cfg, seed=0), overlap=overlap)
    stream, rng = gpt.tokens("train"), np.random.default_rng(0)
    batches = [gpt.lm_batch(stream, rng, batch, cfg.block_size) for _ in range(steps)]
    mine = [shard(b, rank, world) for b in batches]
    losses, times = [], []
    for b in mine:
        trainer.sync()
        start = time.perf_counter()
        loss = trainer.step(b, 1e-4)
        trainer.sync()
        times.append(time.perf_counter() - start)
        losses.append(trainer.read(loss))
    # one more step, traced on rank 0 (the profiler sees GPU kernels only); every
    # rank takes it, or rank 0's all-reduces would wait for partners in vain
    lanes = None
    if rank == 0 and not on_cpu():
        lanes = _trace_one_step(trainer, mine[-1])
    else:
        trainer.step(mine[-1], 1e-4)
    if world > 1:
        from thousand.distributed.data_parallel import all_reduce_sum

        losses = all_reduce_sum(np.array(losses)).tolist()  # the ranks' parts
        dist.destroy_process_group()
    if rank == 0:
        Path(folder, f"gpt{world}.json").write_text(
            json.dumps({"losses": losses, "step_s": times, "lanes": lanes})
        )


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


def gpt_scaling(world: int, size: str, steps: int, batch: int, overlap=True) -> dict:
    """One GPU, then `world` ranks, on the same global batches."""
    import torch
    import torch.multiprocessing as mp

    runs = {}
    with tempfile.TemporaryDirectory() as folder:
        for n in (1, world):
            args = (n, folder, size, steps, batch, overlap)
            mp.spawn(_gpt_rank, args=args, nprocs=n)
            runs[n] = json.loads(Path(folder, f"gpt{n}.json").read_text())
    from thousand.models import gpt

    tokens = batch * gpt.SIZES[size].block_size
    out = {"world": world, "size": size, "batch": batch, "overlap": overlap}
    for n, run in runs.items():
        step_s = float(np.median(run["step_s"][2:]))  # the first steps compile
        out[f"gpus{n}"] = {**run, "median_step_s": step_s, "tokens_s": tokens / step_s}
    one, many = out["gpus1"]["tokens_s"], out[f"gpus{world}"]["tokens_s"]
    out["scaling_efficiency"] = many / (world * one)
    out["loss_gap"] = max(
        abs(a - b) / abs(a)
        for a, b in zip(runs[1]["losses"], runs[world]["losses"], strict=True)
    )
    out["shared_gpu"] = torch.cuda.device_count() < world
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m thousand.distributed.bench")
    ap.add_argument("what", choices=["all-reduce", "gpt"])
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--largest-mib", type=int, default=1024)
    ap.add_argument("--size", default="large")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--no-overlap", action="store_true")
    ap.add_argument("--out", type=Path, help="write the result here as JSON")
    a = ap.parse_args(argv)
    if a.world < 2:
        ap.error("--world: at least 2 ranks")
    if a.what == "all-reduce":
        out = all_reduce(a.world, a.largest_mib)
        print(f"{'bytes':>12} {'library busbw':>14} {'ring busbw':>11} {'ring/lib':>8}")
        for r in out["rows"]:
            print(
                f"{r['bytes']:>12} {r['library_busbw']:>11.1f} GB/s "
                f"{r['ring_busbw']:>8.1f} GB/s {r['ring_vs_library']:>8.2f}"
            )
    else:
        from thousand.models import gpt

        if a.size not in gpt.SIZES:
            ap.error(f"--size: one of {', '.join(gpt.SIZES)}")
        if a.batch % a.world:
            ap.error(f"--batch {a.batch} does not split into {a.world} equal shares")
        out = gpt_scaling(a.world, a.size, a.steps, a.batch, not a.no_overlap)
        for n in (1, a.world):
            g = out[f"gpus{n}"]
            print(
                f"{n} rank(s): {g['median_step_s'] * 1e3:.1f} ms a step, "
                f"{g['tokens_s']:,.0f} tokens/s"
            )
        print(
            f"scaling efficiency {out['scaling_efficiency']:.1%}; "
            f"largest loss gap {out['loss_gap']:.1e}"
        )
    if out["shared_gpu"]:
        print("(the ranks shared one GPU: these figures say nothing of several)")
    if a.out:
        a.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
