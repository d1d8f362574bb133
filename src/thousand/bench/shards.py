"""A GPU run in shards: `python -m thousand.bench --shard K/N`, then `--merge N`.

One full GPU run can outlast a command's time limit (a CI job's, a lent machine's).
Each shard runs the tests whose node id hashes to it (every test lands in exactly
one shard) and keeps what it measured in .bench-shards/K-of-N/; the merge checks
that every shard ran on the same physical GPU (its UUID) at the same commit, then
builds the one ledger from all of them, as a single run would. Figures from two
GPUs, even of one model, are never mixed in a ledger.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import zlib
from pathlib import Path

from thousand.bench import ledger as L

SHARDS_DIR = L.ROOT / ".bench-shards"


def parse(spec: str, option: str = "--shard") -> tuple[int, int]:
    """'2/3' -> (2, 3), with a clear error naming `option` for anything else."""
    try:
        k, n = (int(part) for part in spec.split("/"))
    except ValueError:
        raise ValueError(f"{option} wants K/N such as 1/2, got {spec!r}") from None
    if not 1 <= k <= n:
        raise ValueError(f"{option} {spec}: K must be between 1 and N")
    return k, n


def shard_of(nodeid: str, n: int) -> int:
    """The shard (1..n) a test belongs to: stable across runs and machines."""
    return zlib.crc32(nodeid.encode()) % n + 1


def folder(k: int, n: int) -> Path:
    return SHARDS_DIR / f"{k}-of-{n}"


def gpu_uuid() -> str:
    """The UUID of the GPU this process uses (nvidia-smi, by PCI bus id)."""
    from thousand.cuda.device import current_device

    bus = current_device().pci_bus_id()
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=pci.bus_id,uuid", "--format=csv,noheader"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for line in out.splitlines():
        pci, uuid = (part.strip() for part in line.split(","))
        # nvidia-smi writes 8 hex digits of PCI domain, the driver API 4
        if pci.lower().endswith(bus.lower()[-12:]):
            return uuid
    raise RuntimeError(f"nvidia-smi lists no GPU at PCI bus id {bus}:\n{out}")


def keep(tmp: Path, k: int, n: int, meta: dict) -> Path:
    """Move one shard's junit.xml, bench.json and outputs/ where the merge finds
    them, with what identifies the GPU and the code."""
    dest = folder(k, n)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in ("junit.xml", "bench.json"):
        shutil.copyfile(tmp / name, dest / name)
    shutil.copytree(tmp / "outputs", dest / "outputs")
    (dest / "meta.json").write_text(json.dumps(meta, indent=1))
    return dest


def gather(n: int, into: Path) -> tuple[list[Path], dict]:
    """Every shard's junit file, one bench dict with all their benchmarks, and
    their outputs copied into `into`; refuses shards that are missing, from
    another GPU or from another commit."""
    folders = [folder(k, n) for k in range(1, n + 1)]
    missing = [f.name for f in folders if not (f / "meta.json").exists()]
    if missing:
        raise SystemExit(f"merge: shards not run yet: {', '.join(missing)}")
    metas = [json.loads((f / "meta.json").read_text()) for f in folders]
    for key in ("gpu_uuid", "commit"):
        seen = {m[key] for m in metas}
        if len(seen) != 1:
            raise SystemExit(f"merge: the shards differ in {key}: {sorted(seen)}")
    bench = {"benchmarks": []}
    into.mkdir(parents=True, exist_ok=True)
    for f in folders:
        bench["benchmarks"] += json.loads((f / "bench.json").read_text())["benchmarks"]
        shutil.copytree(f / "outputs", into, dirs_exist_ok=True)
    return [f / "junit.xml" for f in folders], bench
