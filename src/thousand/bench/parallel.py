"""Parts of a stale run at once, one per GPU: `python -m thousand.bench --stale --gpus`.

A full re-record (after a change to the runtime, which every result depends on)
takes longer on one GPU than a lent machine's command may run. On a machine with
several GPUs of one model, the parts run side by side: G workers, one per GPU
(CUDA_VISIBLE_DEVICES), each with its share of the host's cores and its own build
caches, take parts 1..N of the stale plan from one queue. Each part is the run that
`--stale --part K/N` makes, timed on one GPU in one process as always, and merges
into the ledger under one writer's lock when it ends (ledger.merging). With
--until S no part starts after S seconds, so a command with a time limit ends with
whole parts recorded, and what did not run stays stale for the next command.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from thousand.bench import ledger as L

LOGS = L.ROOT / ".bench-shards" / "parts"
# each worker's own build caches, so that two parts never write one file at once
CACHES = ("THOUSAND_CACHE_DIR", "TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR",
          "TORCHINDUCTOR_CACHE_DIR", "MPLCONFIGDIR")  # fmt: skip


def gpu_names() -> list[str]:
    """The name of every GPU the driver sees, in its order."""
    from thousand.cuda.device import driver

    drv = driver()
    return [drv.Device(i).name() for i in range(drv.Device.count())]


def check(gpus: int, split: int | None, until: float | None) -> tuple[int, int]:
    """(G, N) for --gpus G --split N, or ValueError saying what is wrong."""
    names = gpu_names()
    if not 1 <= gpus <= len(names):
        raise ValueError(f"--gpus {gpus}: this machine has {len(names)} GPU(s)")
    if len(set(names[:gpus])) > 1:
        raise ValueError(
            f"--gpus {gpus}: the GPUs are of different models ({', '.join(names)}); "
            "a ledger holds one model's figures"
        )
    n = 2 * gpus if split is None else split
    if n < gpus:
        raise ValueError(f"--split {n}: at least one part per GPU ({gpus})")
    if until is not None and until <= 0:
        raise ValueError(f"--until {until}: wants a number of seconds above 0")
    return gpus, n


def _cores(worker: int, workers: int) -> set[int]:
    """This worker's share of the cores this process may use."""
    cores = sorted(os.sched_getaffinity(0))
    share = max(1, len(cores) // workers)
    return set(cores[worker * share : (worker + 1) * share] or cores)


def run(gpus: int, n: int, until: float | None, extra: list[str]) -> int:
    """Run parts 1..n of the stale plan on `gpus` GPUs; 0 when every part started
    ran and recorded, else 1 (the log of each part says why)."""
    LOGS.mkdir(parents=True, exist_ok=True)
    todo: queue.Queue[int] = queue.Queue()
    for k in range(1, n + 1):
        todo.put(k)
    started = time.monotonic()
    done: dict[int, tuple[int, int, float]] = {}  # part -> (gpu, exit status, s)

    def worker(gpu: int) -> None:
        cores = _cores(gpu, gpus)
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": str(gpu)}
        for var in CACHES:
            env[var] = str(L.ROOT / ".bench-shards" / f"gpu{gpu}" / var.lower())
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(len(cores))
        while True:
            if until is not None and time.monotonic() - started > until:
                return
            try:
                k = todo.get_nowait()
            except queue.Empty:
                return
            cmd = [sys.executable, "-m", "thousand.bench", "--stale",
                   "--part", f"{k}/{n}", "--no-sweeps", *extra]  # fmt: skip
            log = LOGS / f"part-{k}-of-{n}.log"
            t = time.monotonic()
            with log.open("w") as out:
                try:
                    rc = subprocess.run(
                        cmd,
                        cwd=L.ROOT,
                        env=env,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        preexec_fn=lambda: os.sched_setaffinity(0, cores),
                    ).returncode
                except OSError as e:  # could not start: the part failed
                    print(f"could not start {' '.join(cmd)}: {e}", file=out)
                    rc = -1
            done[k] = (gpu, rc, time.monotonic() - t)
            print(
                f"part {k}/{n} on GPU {gpu}: {'recorded' if rc == 0 else 'FAILED'} "
                f"in {done[k][2]:.0f} s ({_rel(log)})",
                flush=True,
            )

    threads = [threading.Thread(target=worker, args=(g,)) for g in range(gpus)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    left = sorted(set(range(1, n + 1)) - set(done))
    failed = sorted(k for k, (_, rc, _) in done.items() if rc != 0)
    if left:
        print(f"not started before --until: parts {left} of {n} (still stale)")
    if failed:
        print(f"failed: parts {failed} of {n}; their logs say why")
    return 0 if not failed else 1


def _rel(path: Path) -> str:
    return os.path.relpath(path, L.ROOT)
