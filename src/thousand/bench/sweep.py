"""Every version of a family against PyTorch across the shapes people use, not one
benchmark shape: `python -m thousand.bench.sweep [--family NAME ...] [--out FILE]`.

A performance claim is a claim about a sweep, stated by its minimum. For each family
below and each shape of its sweep, the family's inputs are made at that shape, every
version the GPU can run is timed, and so is PyTorch's equivalent (the same baseline
the GPU run records, from thousand.bench.baselines), in one process, back to back,
with CUDA events and L2 flushed. Each row gives the fastest version's ratio to
PyTorch; each family's summary its minimum over the sweep and the shape where it
falls. A shape a version refuses (its launcher says why) is recorded as refused.

The shapes: the rows and widths of GPT-class models (768 to 8,192 wide, 1,024 to
65,536 rows, vocabularies of 32,000, 50,257 and 128,256), ResNet-50's 1x1 and 3x3
convolutions at batch 32 (56 down to 7 pixels, 64 to 2,048 channels), GEMMs square,
tall, wide, of thin K, and the A16 GPT's own.

Beside the versions, each row times the family's front door (`softmax(x)`,
`layer_norm_backward(...)`): the function a user calls, which may pick the version
and the block by the shape, as cuBLAS and cuDNN pick their kernels. Its ratio is the
family's claim; the fastest version's shows what the ladder has in it.

`--record` writes the sweep into docs/assets/results/sweeps/<gpu>.json, one entry a
family with the run's date and commit and the fingerprint of the family's code and
of its shapes; the CPU tests call an entry stale when either changes, as they do the
ledger's. `--stale` sweeps only the families whose entry is stale or missing. Pages
draw a family's sweep with <!-- results:sweep NAME -->.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import importlib
import json
import sys
from pathlib import Path

import numpy as np

from thousand.bench import ledger as L

ROWS = (1024, 8192, 65536)
WIDTHS = (768, 1024, 1600, 4096, 8192)
VOCABS = (32000, 50257, 128256)
# every pair up to 2^28 elements a matrix (1 GiB): 65,536 x 8,192 would be 2 GiB
ROW_SHAPES = tuple((r, c) for r in ROWS for c in WIDTHS if r * c <= 2**28)
XENT_SHAPES = tuple((r, v) for r in (1024, 8192) for v in VOCABS)
FLAT = ((2**20,), (8192 * 1536,), (2**24,), (2**27,))
# ResNet-50's stages at batch 32, NHWC: (N, H, W, C, R, S, F, stride, pad, dil, groups)
RESNET50 = tuple(
    (32, hw, hw, c, k, k, f, 1, k // 2, 1, 1)
    for hw, c, k, f in (
        (56, 64, 1, 64),
        (56, 64, 3, 64),
        (56, 64, 1, 256),
        (56, 256, 1, 64),
        (28, 128, 3, 128),
        (28, 128, 1, 512),
        (28, 512, 1, 128),
        (14, 256, 3, 256),
        (14, 256, 1, 1024),
        (14, 1024, 1, 256),
        (7, 512, 3, 512),
        (7, 512, 1, 2048),
        (7, 2048, 1, 512),
    )
)
GEMMS = (
    (1024, 1024, 1024),
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (16384, 1024, 1024),  # tall
    (1024, 16384, 1024),  # wide
    (8192, 8192, 256),  # thin K
    (8192, 1152, 384),  # A16 large: qkv
    (8192, 1536, 384),  # A16 large: MLP up
    (8192, 384, 1536),  # A16 large: MLP down
)
# (B, T, C, vocab, positions), as the embedding family takes them
EMBEDDINGS = (
    (64, 128, 384, 8192, 128),
    (8, 1024, 768, 50257, 1024),
    (8, 1024, 1600, 50257, 1024),
    (4, 2048, 4096, 128256, 2048),
)
SWEEPS = {
    "softmax": ROW_SHAPES,
    "softmax_backward": ROW_SHAPES,
    "layer_norm": ROW_SHAPES,
    "layer_norm_backward": ROW_SHAPES,
    "gelu": FLAT,
    "gelu_backward": FLAT,
    "cross_entropy": XENT_SHAPES,
    "cross_entropy_backward": XENT_SHAPES,
    "embedding": EMBEDDINGS,
    "embedding_backward": EMBEDDINGS,
    "adamw": ((2**20,), (12_300_000,), (124_475_904,)),  # A16 large, GPT-2 small
    "conv": RESNET50,
    "conv_backward_filter": RESNET50,
    "conv_backward_data": RESNET50,
    "sgemm": GEMMS,
    "matmul_wgmma": GEMMS,
    "matmul_wgmma_tf32": GEMMS,
}


# A family timed against another family's PyTorch op (the same inputs).
BASELINE_OF = {"sgemm": "matmul"}


def _time(run) -> float:
    from thousand.cuda import median, time_ms

    return median(time_ms(run, warmup=2, repeat=10))


def sweep_family(name: str, shapes) -> list[dict]:
    """One row a shape: each version's ms (or why it refused), PyTorch's ms."""
    import torch

    from thousand.bench.baselines import as_torch, torch_ops
    from thousand.bench.checks import bench_inputs, prepared_run
    from thousand.bench.quick import runnable
    from thousand.kernels.family import all_families

    family = {f.name: f for f in all_families()}[name]
    ops = torch_ops()
    rows = []
    for shape in shapes:
        row = {"family": name, "shape": list(shape), "versions": {}}
        try:
            host = family.timed_inputs(np.random.default_rng(0), shape)
            d_in = bench_inputs(family, shape)
        except (ValueError, MemoryError) as e:
            row["refused"] = str(e)[:200]
            rows.append(row)
            continue
        for v in runnable(family):
            try:
                row["versions"][v.kernel] = _time(prepared_run(v, d_in))
            except (ValueError, RuntimeError) as e:
                row["versions"][v.kernel] = f"refused: {str(e)[:160]}"
        try:
            row["front_door_ms"] = _time(front_door_run(family, d_in))
        except (ValueError, RuntimeError) as e:
            row["front_door_refused"] = str(e)[:200]
        op = ops.get(BASELINE_OF.get(name, name))
        if op is not None:
            t_in = [as_torch(a) for a in host]
            try:
                row["torch_ms"] = _time(op(*t_in))
            except (RuntimeError, ValueError) as e:
                row["torch_refused"] = str(e)[:200]
            del t_in
        timed = {k: ms for k, ms in row["versions"].items() if isinstance(ms, float)}
        if timed and "torch_ms" in row:
            best = min(timed, key=timed.get)
            row["best"], row["ratio"] = best, row["torch_ms"] / timed[best]
        if "front_door_ms" in row and "torch_ms" in row:
            row["front_door_ratio"] = row["torch_ms"] / row["front_door_ms"]
        rows.append(row)
        del d_in, host
        torch.cuda.empty_cache()
        print(json.dumps(row), flush=True)
    return rows


def front_door_run(family, d_in):
    """A no-argument call of the family's front door (`softmax(x, out=...)`) into
    an output allocated once, as prepared_run does for one version: the function
    named after the family in its module, with the version and block it picks."""
    front = getattr(
        importlib.import_module(f"thousand.kernels.{family.name}"), family.name
    )
    first = family.versions[0]  # any version's output has the front door's shape
    if first.timed_out is not None:  # in place, as its users call it
        out = d_in[first.timed_out]
    else:
        out = first.run(*d_in, block=first.default_block)

    def run():
        front(*d_in, out=out)

    return run


def summary(rows: list[dict]) -> dict:
    """A family's minimum ratio over the sweep and the shape it falls at."""
    rated = [r for r in rows if "ratio" in r]
    if not rated:
        return {"shapes": len(rows), "rated": 0}
    low = min(rated, key=lambda r: r["ratio"])
    high = max(rated, key=lambda r: r["ratio"])
    out = {
        "shapes": len(rows),
        "rated": len(rated),
        "min_ratio": low["ratio"],
        "min_at": low["shape"],
        "max_ratio": high["ratio"],
        "max_at": high["shape"],
    }
    doors = [r for r in rows if "front_door_ratio" in r]
    if doors:
        low = min(doors, key=lambda r: r["front_door_ratio"])
        out["front_door_min"] = low["front_door_ratio"]
        out["front_door_min_at"] = low["shape"]
    return out


# -- the record: docs/assets/results/sweeps/<gpu>.json --------------------------

RECORDS_DIR = L.RESULTS_DIR / "sweeps"
SCHEMA = 1


def known(name) -> str:
    """`name` if a sweep of it exists; else a ValueError naming those that do."""
    if name not in SWEEPS:
        raise ValueError(
            f"no sweep of {name!r}; there are: {', '.join(sorted(SWEEPS))}"
        )
    return name


def fingerprint(name: str) -> str:
    """What a family's sweep depends on: its code (the ledger's fingerprint of the
    family) and the shapes it is swept over."""
    known(name)
    shapes = json.dumps([list(s) for s in SWEEPS[name]])
    return hashlib.sha256(f"{L.family_fingerprint(name)}|{shapes}".encode()).hexdigest()


def shape_label(name: str, shape) -> str:
    """A shape as the sweep's chart names it: conv layers by image, channels and
    filter, GEMMs as M x N x K, embeddings by batch, sequence, width and vocabulary."""
    if name.startswith("conv"):
        N, H, W, C, R, S, F, *_ = shape
        return f"{H}x{W} {C}->{F} {R}x{S}"
    if name.startswith("embedding"):
        B, T, C, V, _ = shape
        return f"B{B} T{T} C{C} V{V:,}"
    if len(shape) == 1:
        n = shape[0]
        return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else f"{n:,}"
    return " x ".join(f"{d:,}" for d in shape)


def records() -> dict[str, dict]:
    """Every recorded family's sweep: {family: {"device", "run", "rows", "summary",
    "fingerprint", "file"}}. Where two GPUs recorded a family, the site's ledger's
    GPU wins, then the newer run."""
    site_slug = L.site_slug()
    found: dict[str, dict] = {}
    for path in sorted(RECORDS_DIR.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("schema") != SCHEMA:
            raise ValueError(f"{path}: schema {doc.get('schema')!r}, want {SCHEMA}")
        for name, entry in doc["families"].items():
            entry = {**entry, "device": doc["device"], "file": path.name}
            old = found.get(name)
            mine = doc["device"]["slug"] == site_slug
            if old is None or (mine, entry["run"]["date"]) > (
                old["device"]["slug"] == site_slug,
                old["run"]["date"],
            ):
                found[name] = entry
    return found


def stale(entry_name: str, entry: dict) -> str | None:
    """Why a recorded family's sweep no longer matches the code, or None."""
    if entry_name not in SWEEPS:
        return f"sweep {entry_name}: no such sweep any more"
    if entry["fingerprint"] != fingerprint(entry_name):
        return f"sweep {entry_name}: its kernels or shapes changed since the GPU run"
    return None


def write_record(families: dict, info: dict, run: dict) -> Path:
    """Merge the families just swept into this GPU's record file."""
    RECORDS_DIR.mkdir(parents=True, exist_ok=True)
    slug = L.slug(info["name"])
    path = RECORDS_DIR / f"{slug}.json"
    doc = {"schema": SCHEMA, "device": {"name": info["name"], "slug": slug}}
    doc["families"] = {}
    if path.exists():
        old = json.loads(path.read_text(encoding="utf-8"))
        if old.get("schema") == SCHEMA:
            doc["families"] = {k: v for k, v in old["families"].items() if k in SWEEPS}
    for name, swept in families.items():
        doc["families"][name] = {
            "fingerprint": fingerprint(name),
            "run": run,
            "rows": swept["rows"],
            "summary": swept["summary"],
        }
    doc["families"] = dict(sorted(doc["families"].items()))
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return path


# -- drawn on the pages as an experiment's bars ------------------------------------

FRONT_DOOR, FASTEST = "front door", "fastest version"


def experiment(name: str):
    """The sweep of `name` as an Experiment, so the site draws and tabulates it as
    it does every experiment (bars of the ratio to PyTorch, one row a shape)."""
    from thousand.experiments import Experiment, Note

    known(name)
    return Experiment(
        name=f"sweep-{name.replace('_', '-')}",
        title={
            "zh": f"{name} 扫过常用形状：相对 PyTorch 的速度（大于 1 即更快）",
            "en": f"{name} across the shapes models use: speed against PyTorch "
            "(above 1: faster)",
        },
        run=lambda quick: {},
        families=(name,),
        notes={
            "front_door_min": Note(
                "入口函数在整个扫描上的最低比值",
                "the front door's lowest ratio",
                "{:.2f}x",
            ),
            "best_min": Note(
                "最快版本在整个扫描上的最低比值",
                "the fastest version's lowest ratio",
                "{:.2f}x",
            ),
        },
        zh={
            "shape": "形状",
            "speed against PyTorch (x)": "相对 PyTorch 的速度（倍）",
            FRONT_DOOR: "入口函数",
            FASTEST: "最快的版本",
        },
    )


def as_result(name: str, entry: dict) -> dict:
    """The recorded rows as an experiment's result (see thousand.experiments)."""
    known(name)
    if not isinstance(entry, dict) or not isinstance(entry.get("rows"), list):
        raise ValueError(
            f"sweep {name}: a record entry has a list of rows, got {entry!r:.80}"
        )
    rows = [r for r in entry["rows"] if "ratio" in r]
    if not rows:
        raise ValueError(f"sweep {name}: no shape was timed against PyTorch")
    doors = [r.get("front_door_ratio") for r in rows]
    notes = {"best_min": min(r["ratio"] for r in rows)}
    notes["front_door_min"] = (
        min(d for d in doors if d is not None)
        if any(d is not None for d in doors)
        else notes["best_min"]
    )
    series = {FRONT_DOOR: doors, FASTEST: [r["ratio"] for r in rows]}
    if all(d is None for d in doors):
        del series[FRONT_DOOR]
    return {
        "kind": "bars",
        "x": {
            "label": "shape",
            "values": [shape_label(name, r["shape"]) for r in rows],
        },
        "y": {"label": "speed against PyTorch (x)", "log": False, "format": "{:.2f}"},
        "series": series,
        "notes": notes,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m thousand.bench.sweep")
    ap.add_argument("--family", action="append", choices=sorted(SWEEPS))
    ap.add_argument("--out", type=Path, help="write every row and summary as JSON")
    ap.add_argument(
        "--record",
        action="store_true",
        help="merge what it sweeps into docs/assets/results/sweeps/<gpu>.json",
    )
    ap.add_argument(
        "--stale",
        action="store_true",
        help="with --record: sweep only the families whose record is stale or missing",
    )
    a = ap.parse_args(argv)
    if a.out is not None and not a.out.resolve().parent.is_dir():
        ap.error(f"--out {a.out}: its folder does not exist")
    if a.stale and not a.record:
        ap.error("--stale goes with --record")
    if a.stale and a.family:
        ap.error("--stale picks the families itself: give no --family")
    from thousand.cuda import device_info, gpu_status

    ok, why = gpu_status()
    if not ok:
        print(f"python -m thousand.bench.sweep times GPUs: {why}", file=sys.stderr)
        return 2
    info = device_info()
    names = a.family or list(SWEEPS)
    if a.stale:
        path = RECORDS_DIR / f"{L.slug(info['name'])}.json"
        mine = json.loads(path.read_text())["families"] if path.exists() else {}
        names = [n for n in SWEEPS if n not in mine or stale(n, mine[n])]
        print("stale or missing:", ", ".join(names) or "none", flush=True)
    out = {"device": info["name"], "families": {}}
    for name in names:
        rows = sweep_family(name, SWEEPS[name])
        out["families"][name] = {"rows": rows, "summary": summary(rows)}
        if a.out:  # after every family: a run cut short keeps what it measured
            a.out.write_text(json.dumps(out, indent=1))
        if a.record:  # likewise: each family is recorded as soon as it is swept
            from thousand.bench.__main__ import git_commit

            when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
            command = "python -m thousand.bench.sweep --record" + (
                " --stale" if a.stale else ""
            )
            run = {"date": when, "commit": git_commit(), "command": command}
            write_record({name: out["families"][name]}, info, run)
        s = out["families"][name]["summary"]
        if s.get("rated"):
            door = (
                f"; front door min {s['front_door_min']:.2f}x at "
                f"{s['front_door_min_at']}"
                if "front_door_min" in s
                else ""
            )
            print(
                f"== {name}: min {s['min_ratio']:.2f}x PyTorch at {s['min_at']}, "
                f"max {s['max_ratio']:.2f}x at {s['max_at']}{door}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
