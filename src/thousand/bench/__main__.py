"""The GPU run: `python -m thousand.bench` on a machine with an NVIDIA GPU.

1. runs the GPU test layer (every kernel against its reference, compute-sanitizer,
   every snippet, every notebook page) and the benchmarks, in one pytest session;
   With --shard K/N it runs one of N shards and keeps its results in
   .bench-shards/; --merge N then builds the ledger from all of them (same GPU,
   same commit), for machines whose commands may not run as long as one full run;
2. only if all of it passed, writes the ledger docs/assets/results/<gpu>.json, the
   snippet outputs docs/assets/outputs/<gpu>/ and the executed notebooks
   docs/<lang>/notebooks/*.ipynb, which the pages render;
3. prints every kernel's bandwidth or FLOP rate as ratios to the copy kernel (the
   measured peak), NumPy and PyTorch, all from this one run.

With --stale it runs only what no longer matches the ledger of this GPU model
(changed kernel families, snippets, experiments, notebooks, and whatever imports a
changed family), with the copy kernel and the library baselines of those families
beside them, and merges that into the ledger: each entry keeps the run that
measured it, so every ratio still comes from one run on one GPU.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from thousand.bench import ledger as L
from thousand.bench import shards
from thousand.cuda import device_info, gpu_status, nvcc_path
from thousand.experiments import all_experiments, by_name
from thousand.kernels.family import all_families, tolerance


def run_pytest(
    tmp: Path, extra: list[str], shard: str | None = None, plan: dict | None = None
) -> int:
    # THOUSAND_BACKEND=gpu: nothing in the GPU run may fall back to the CPU backend.
    env = {
        **os.environ,
        "THOUSAND_RECORD_DIR": str(tmp / "outputs"),
        "THOUSAND_BACKEND": "gpu",
    }
    if shard:  # tests/conftest.py keeps only this shard's tests
        env["THOUSAND_SHARD"] = shard
    if plan is not None:  # ... or only the tests of what the plan names
        plan_file = tmp / "plan.json"
        plan_file.write_text(json.dumps({k: sorted(v) for k, v in plan.items()}))
        env["THOUSAND_REDO"] = str(plan_file)
        # compute-sanitizer's pass (python -m thousand.kernels) checks these only
        env["THOUSAND_FAMILIES"] = ",".join(sorted(plan["kernels"]))
    (tmp / "outputs").mkdir()
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-m",
        "gpu",
        "tests",
        "-n",
        "0",  # one process: timings must not share the GPU or the host's cores
        "-p",
        "no:cacheprovider",
        "-o",
        "junit_family=legacy",  # keeps record_property values in the XML
        f"--junitxml={tmp / 'junit.xml'}",
        f"--benchmark-json={tmp / 'bench.json'}",
        "--benchmark-columns=min,median,max,rounds",
        *extra,
    ]
    print("$", " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=L.ROOT, env=env).returncode


def read_checks(*junits: Path) -> tuple[dict, set, set, set]:
    """Per kernel: how many (size, block) cases ran and whether all passed; the
    snippets, notebooks and experiments that ran (over one run's or every shard's
    junit files)."""
    checks, snippets_ok, notebooks_ok, experiments_ok = {}, set(), set(), set()
    cases = (case for junit in junits for case in ET.parse(junit).iter("testcase"))
    for case in cases:
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        failed = any(
            case.find(tag) is not None for tag in ("failure", "error", "skipped")
        )
        if "kernel" in props:
            c = checks.setdefault(
                props["kernel"], {"cases": 0, "passed": True, "sizes": [], "blocks": []}
            )
            c["cases"] += 1
            c["passed"] &= not failed
            size = json.loads(props["size"])
            if size not in c["sizes"]:
                c["sizes"].append(size)
            if props["block"] not in c["blocks"]:
                c["blocks"].append(props["block"])
        if "snippet" in props and not failed:
            snippets_ok.add(props["snippet"])
        if "notebook" in props and not failed:
            notebooks_ok.add(props["notebook"])
        if "experiment" in props and not failed:
            experiments_ok.add(props["experiment"])
    return checks, snippets_ok, notebooks_ok, experiments_ok


def git_commit() -> str:
    if os.environ.get("THOUSAND_COMMIT"):  # for a copy of the tree without .git
        return os.environ["THOUSAND_COMMIT"]
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            cwd=L.ROOT,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return sha


def nvcc_version() -> str:
    """'13.0.88' from nvcc's 'Cuda compilation tools, release 13.0, V13.0.88'."""
    out = subprocess.run([nvcc_path(), "--version"], capture_output=True, text=True)
    found = re.search(r"\bV(\d+\.\d+\.\d+)", out.stdout)
    return found.group(1) if found else out.stdout.strip().splitlines()[-1]


def this_run(info: dict, bench: dict, command: str, peak: float) -> dict:
    """What identifies a run: when, which code, which GPU, which software."""
    torch_version = next(
        (
            b["extra_info"]["torch"]
            for b in bench["benchmarks"]
            if b["extra_info"].get("kind") == "torch"
        ),
        None,
    )
    software = {
        **{k: info.get(k) for k in L.SOFTWARE},
        "nvcc": nvcc_version(),
        "numpy": np.__version__,
        "torch": torch_version,
        "python": platform.python_version(),
    }
    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": git_commit(),
        "command": command,
        "gpu_uuid": shards.gpu_uuid(),
        **software,
        "copy_peak_gbps": peak,
    }


def kernel_entries(bench: dict, checks: dict, run: int) -> tuple[dict, float]:
    """Every kernel this run timed, with its ratios to the copy kernel and the
    libraries, all measured in this run; and the copy kernel's bandwidth."""
    by_kind: dict[str, list] = {}
    for b in bench["benchmarks"]:
        by_kind.setdefault(b["extra_info"].get("kind"), []).append(b)

    def medians(kind: str) -> dict:
        return {
            b["extra_info"]["family"]: b["extra_info"]["median_ms"]
            for b in by_kind.get(kind, [])
        }

    numpy_ms = {  # NumPy runs on the host: pytest-benchmark's own clock
        b["extra_info"]["family"]: b["stats"]["median"] * 1e3
        for b in by_kind.get("numpy", [])
    }
    torch_ms, pycuda_ms = medians("torch"), medians("pycuda")
    families = {f.name: f for f in all_families()}
    timed = {b["extra_info"]["family"] for b in by_kind.get("kernel", [])}
    fingerprints = {name: L.family_fingerprint(name) for name in timed}
    kernels = {}
    for b in by_kind.get("kernel", []):
        e = b["extra_info"]
        f = families[e["family"]]
        v = next(v for v in f.versions if v.kernel == e["kernel"])
        size = tuple(e["size"])
        ms = e["median_ms"]
        entry = {
            "family": f.name,
            "version": v.number,
            "teaches": v.teaches,
            "source_sha256": L.family_sha256(f.name),
            "fingerprint": fingerprints[f.name],
            "check": {**checks[v.kernel], "tolerance": tolerance(f, v)},
            "size": list(size),
            "block": str(v.default_block),
            "median_ms": ms,
            "min_ms": e["min_ms"],
            "max_ms": e["max_ms"],
            "repeats": e["repeats"],
            "numpy_ms": numpy_ms.get(f.name),
            "torch_ms": torch_ms.get(v.baseline or f.name),
            "pycuda_ms": pycuda_ms.get(f.name),
            "run": run,
        }
        if v.baseline:
            entry["torch_baseline"] = v.baseline
        if f.bytes_moved:
            entry["bytes"] = f.bytes_moved(size)
            entry["gbps"] = entry["bytes"] / ms / 1e6
        if f.flops:
            entry["flops"] = f.flops(size)
            entry["gflops"] = entry["flops"] / ms / 1e6
        kernels[v.kernel] = entry

    copies = [k["gbps"] for k in kernels.values() if k["family"] == "copy"]
    if not copies:
        raise SystemExit("the copy kernel was not timed: no peak to measure against")
    peak = max(copies)
    for k in kernels.values():
        if "gbps" in k:
            k["pct_of_copy"] = 100 * k["gbps"] / peak
        if k["numpy_ms"]:
            k["speedup_vs_numpy"] = k["numpy_ms"] / k["median_ms"]
        if k["torch_ms"]:
            k["pct_of_torch"] = 100 * k["torch_ms"] / k["median_ms"]
        if k["pycuda_ms"]:
            k["speedup_vs_pycuda"] = k["pycuda_ms"] / k["median_ms"]
    return kernels, peak


def recorded_entries(
    record_dir: Path, slug: str, plan: dict, ok: dict, run: int, clean: bool
) -> dict[str, dict]:
    """Snippets, notebooks and experiments of the plan, as this run recorded them;
    their outputs are put where the pages read them."""
    out_dir = L.OUTPUTS_DIR / slug
    if clean and out_dir.exists():  # a full run: no output of a removed snippet stays
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    found: dict[str, dict] = {"snippets": {}, "notebooks": {}, "experiments": {}}
    for path in L.snippets():
        if path.name not in plan["snippets"]:
            continue
        if path.name not in ok["snippets"]:
            raise SystemExit(f"snippet {path.name} did not pass: not recording")
        target = out_dir / f"{path.stem}.txt"
        shutil.copyfile(record_dir / f"{path.stem}.txt", target)
        found["snippets"][path.name] = {
            "sha256": L.snippet_sha256(path),
            "fingerprint": L.snippet_fingerprint(path),
            "output": str(target.relative_to(L.ROOT)),
            "output_sha256": L.sha256_of(target),
            "run": run,
        }
    for path in L.notebooks():
        key = path.relative_to(L.ROOT).as_posix()
        if key not in plan["notebooks"]:
            continue
        if key not in ok["notebooks"]:
            raise SystemExit(f"notebook {key} did not run: not recording")
        # Same cells, now with this run's outputs: the page shows these.
        shutil.copyfile(record_dir / "notebooks" / key, path)
        found["notebooks"][key] = {
            "sha256": L.notebook_source_sha256(path),
            "fingerprint": L.notebook_fingerprint(path),
            "output_sha256": L.sha256_of(path),
            "outputs_sha256": L.notebook_outputs_sha256(path),
            "run": run,
        }
    for e in all_experiments():
        if e.name not in plan["experiments"]:
            continue
        if e.name not in ok["experiments"]:
            raise SystemExit(f"experiment {e.name} did not pass: not recording")
        recorded = record_dir / "experiments" / f"{e.name}.json"
        found["experiments"][e.name] = {
            "sha256": e.sha256(),
            "fingerprint": L.experiment_fingerprint(e),
            "result": json.loads(recorded.read_text()),
            "run": run,
        }
    return found


def targets_of(kernels: dict) -> list[dict]:
    """The benchmark targets, each from one entry's own ratio (one run's figures)."""
    families = {f.name: f for f in all_families()}

    def outcome(what: str, best: dict, ratio: float, target: float) -> dict:
        return {
            "what": what,
            "kernel": f"{best['family']}_v{best['version']}",
            "ratio": ratio,
            "target": target,
            "met": ratio >= target,
        }

    def versus_copy(what: str, family: str, target: float, versions=None) -> dict:
        """A family's best version (of `versions`) as a fraction of the copy kernel
        timed in the same run."""
        mine = [k for k in kernels.values() if k["family"] == family]
        if versions is not None:
            mine = [k for k in mine if k["version"] in versions]
        if not mine:  # a family this ledger has not recorded yet
            return None
        best = max(mine, key=lambda k: k["pct_of_copy"])
        return outcome(what, best, best["pct_of_copy"] / 100, target)

    def versus_library(what, family, key, target, versions) -> dict:
        """The fastest of `versions` against a library time `key` (torch_ms, ...)."""
        mine = [
            k
            for k in kernels.values()
            if k["family"] == family and k["version"] in versions
        ]
        if not mine:  # a family this ledger has not recorded yet
            return None
        best = min(mine, key=lambda k: k["median_ms"])
        if not best.get(key):  # that library is not on this machine: not measured
            return None
        return outcome(what, best, best[key] / best["median_ms"], target)

    def every(family: str) -> list[int]:
        return (
            [v.number for v in families[family].versions] if family in families else []
        )

    def cuda_core_versions(family: str) -> list[int]:
        if family not in families:
            return []
        return [v.number for v in families[family].versions if not v.gpu_only]

    reduce_all = every("reduce")
    cuda_cores = cuda_core_versions("matmul")
    tensor_cores = [v.number for v in families["matmul"].versions if v.gpu_only]
    targets = [
        versus_copy(
            "best vector add vs the copy kernel, float32, n = 2^28", "vector_add", 0.90
        ),
        versus_copy(
            "padded shared-memory transpose vs the copy kernel, 8192 x 8192",
            "transpose",
            0.80,
            versions=(3, 4),  # the padded ones; v2 is the same tile unpadded
        ),
        versus_copy(
            "best reduction vs the copy kernel, float32, n = 2^28", "reduce", 0.90
        ),
        versus_library(
            "best reduction vs PyCUDA's gpuarray.sum, float32, n = 2^28",
            "reduce",
            "pycuda_ms",
            1.4,
            reduce_all,
        ),
        versus_library(
            "best reduction vs torch.sum, float32, n = 2^28",
            "reduce",
            "torch_ms",
            1.0,
            reduce_all,
        ),
        versus_library(
            "best CUDA-core SGEMM vs cuBLAS with TF32 off, 4096^3",
            "matmul",
            "torch_ms",
            0.75,
            cuda_cores,
        ),
        versus_library(
            "best tensor-core GEMM vs cuBLAS with TF32 on, 4096^3",
            "matmul",
            "torch_ms",
            0.50,
            tensor_cores,
        ),
        # To the limit (issue 19): the copy peak, SGEMM, Hopper's tensor cores
        versus_library(
            "the copy kernel vs torch's copy_, float32, n = 2^28",
            "copy",
            "torch_ms",
            1.0,
            every("copy"),
        ),
        versus_library(
            "best vector add vs torch.add, float32, n = 2^28",
            "vector_add",
            "torch_ms",
            1.0,
            every("vector_add"),
        ),
        versus_library(
            "tuned CUDA-core SGEMM vs cuBLAS with TF32 off, 4096^3",
            "sgemm",
            "torch_ms",
            0.85,
            every("sgemm"),
        ),
        versus_library(
            "wgmma bf16 GEMM vs cuBLAS bf16, 8192^3",
            "matmul_wgmma",
            "torch_ms",
            0.70,
            every("matmul_wgmma"),
        ),
        versus_library(
            "wgmma TF32 GEMM vs cuBLAS with TF32 on, 8192^3",
            "matmul_wgmma_tf32",
            "torch_ms",
            0.70,
            every("matmul_wgmma_tf32"),
        ),
        # Convolution (issue 20): B11's shape, 3 x 3, pad 1, 32 x 56 x 56 x 64 -> 64
        versus_library(
            "best CUDA-core convolution vs cuDNN with TF32 off, 3x3 64->64 56x56 N=32",
            "conv",
            "torch_ms",
            0.60,
            cuda_core_versions("conv"),
        ),
        versus_library(
            "best CUDA-core filter gradient vs cuDNN with TF32 off, same layer",
            "conv_backward_filter",
            "torch_ms",
            0.50,
            cuda_core_versions("conv_backward_filter"),
        ),
        # The Transformer's row-wise kernels (issue: softmax, layer norm, attention)
        versus_copy(
            "best softmax vs the copy kernel, float32, 32,768 x 4,096", "softmax", 0.90
        ),
        versus_library(
            "best softmax vs torch.softmax, float32, 32,768 x 4,096",
            "softmax",
            "torch_ms",
            1.3,
            every("softmax"),
        ),
        versus_library(
            "best layer norm forward vs torch layer_norm, float32, 32,768 x 4,096",
            "layer_norm",
            "torch_ms",
            1.1,
            every("layer_norm"),
        ),
        versus_library(
            "best fused attention vs scaled_dot_product_attention, bf16, "
            "B=4, H=32, T=4,096, d=128, not causal",
            "attention_bf16",
            "torch_ms",
            0.40,
            every("attention_bf16"),
        ),
    ]
    return [t for t in targets if t is not None]


def build_ledger(
    bench: dict,
    checks: dict,
    record_dir: Path,
    ok: dict,
    command: str = "python -m thousand.bench",
    old: dict | None = None,
    plan: dict | None = None,
) -> dict:
    """The ledger of this run; with `old` and `plan` (a stale-only run), `old` with
    the planned entries replaced by this run's and the rest kept as they were."""
    info = device_info()
    slug = L.slug(info["name"])
    if old is not None and old["device"]["name"] != info["name"]:
        raise SystemExit(
            f"the ledger is of {old['device']['name']}, this GPU is {info['name']}"
        )
    runs = list(old["runs"]) if old is not None else []
    index = len(runs)
    kernels, peak = kernel_entries(bench, checks, index)
    runs.append(this_run(info, bench, command, peak))
    if plan is None:  # a full run: everything comes from it
        plan = L.redo_plan(None)
    elif missing := plan["kernels"] - {k["family"] for k in kernels.values()}:
        raise SystemExit(f"planned but not timed: {sorted(missing)}")
    fresh = recorded_entries(record_dir, slug, plan, ok, index, clean=old is None)
    ledger = {"schema": L.SCHEMA, "runs": runs}
    ledger["kernels"] = {
        **{
            name: k
            for name, k in (old or {}).get("kernels", {}).items()
            if k["family"] not in plan["kernels"] and k["family"] != "copy"
        },
        **kernels,
    }
    for section in ("snippets", "notebooks", "experiments"):
        kept = (old or {}).get(section, {})
        ledger[section] = {**kept, **fresh[section]}
    # Drop what the repository no longer has (a removed snippet, say).
    current = L.redo_plan(None)
    for section in L.SECTIONS:
        names = current[section]
        if section == "kernels":
            ledger[section] = {
                k: e for k, e in ledger[section].items() if e["family"] in names
            }
        else:
            ledger[section] = {k: e for k, e in ledger[section].items() if k in names}
    series = sorted(
        (
            b["extra_info"]
            for b in bench["benchmarks"]
            if b["extra_info"].get("kind") == "series"
        ),
        key=lambda e: e["n"],
    )
    ledger["series"] = dict((old or {}).get("series", {}))
    ledger["series_runs"] = dict((old or {}).get("series_runs", {}))
    if series:
        ledger["series"]["b1-cpu-vs-gpu"] = [
            {k: e[k] for k in ("n", "numpy_ms", "kernel_ms", "with_copies_ms")}
            for e in series
        ]
        ledger["series_runs"]["b1-cpu-vs-gpu"] = index
    ledger["targets"] = targets_of(ledger["kernels"])
    # Runs no entry comes from any more are dropped; the rest renumbered in order.
    used = sorted(
        {e["run"] for s in L.SECTIONS for e in ledger[s].values()}
        | set(ledger["series_runs"].values())
    )
    renumber = {old_i: new_i for new_i, old_i in enumerate(used)}
    ledger["runs"] = [runs[i] for i in used]
    for s in L.SECTIONS:
        for e in ledger[s].values():
            e["run"] = renumber[e["run"]]
    ledger["series_runs"] = {k: renumber[v] for k, v in ledger["series_runs"].items()}
    latest = ledger["runs"][-1]
    ledger["run"] = {k: latest[k] for k in ("date", "commit", "command")}
    ledger["device"] = {
        **info,
        **{k: latest[k] for k in L.SOFTWARE},
        "slug": slug,
        "copy_peak_gbps": latest["copy_peak_gbps"],
    }
    return ledger


def print_summary(ledger: dict) -> None:
    d = ledger["device"]
    print(
        f"\n{d['name']}  sm_{d['compute_capability']}  driver {d['driver_release']}"
        f"  copy peak {d['copy_peak_gbps']:,.0f} GB/s"
        + (
            f"  (theoretical {d['peak_bandwidth_gbps']:,.0f})"
            if d.get("peak_bandwidth_gbps")
            else ""
        )
    )
    print(
        f"{'kernel':<18}{'size':>18}{'ms':>10}{'rate':>16}{'% copy':>8}"
        f"{'x NumPy':>9}{'% torch':>9}"
    )
    for name, k in sorted(ledger["kernels"].items()):
        rate = f"{k['gbps']:,.0f} GB/s" if "gbps" in k else f"{k['gflops']:,.0f} GF/s"
        pct = f"{k['pct_of_copy']:.1f}" if "pct_of_copy" in k else "-"
        vs_np = f"{k['speedup_vs_numpy']:.1f}" if k.get("speedup_vs_numpy") else "-"
        vs_t = f"{k['pct_of_torch']:.0f}" if k.get("pct_of_torch") else "-"
        size = "x".join(map(str, k["size"]))
        print(
            f"{name:<18}{size:>18}{k['median_ms']:>10.3f}{rate:>16}{pct:>8}"
            f"{vs_np:>9}{vs_t:>9}"
        )
    for name, entry in sorted(ledger["experiments"].items()):
        notes = by_name(name).notes
        for key, value in entry["result"]["notes"].items():
            print(f"{name}: {notes[key].en}: {notes[key].format.format(value)}")
    for t in ledger["targets"]:
        print(
            f"target: {t['what']}: {t['kernel']} at {100 * t['ratio']:.1f}% "
            f"(needs {100 * t['target']:.0f}%): {'met' if t['met'] else 'NOT met'}"
        )


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        prog="python -m thousand.bench",
        description="The GPU run: check and time every kernel, snippet, experiment "
        "and notebook on this machine's NVIDIA GPU, then write the ledger. "
        "Options it does not know go to pytest.",
    )
    parser.add_argument(
        "--stale",
        action="store_true",
        help="run only what no longer matches this GPU's ledger (with the copy "
        "kernel and those families' library baselines) and merge it in",
    )
    parser.add_argument(
        "--redo",
        action="append",
        default=[],
        metavar="NAME",
        help="with --stale: also redo this family, snippet file, experiment or "
        "notebook (repeatable)",
    )
    parser.add_argument(
        "--part",
        metavar="K/N",
        help="with --stale: redo only part K of N of what is stale, as a run of its "
        "own (with the copy kernel), for machines that cannot run it all at once",
    )
    parser.add_argument(
        "--all-kernels",
        action="store_true",
        help="with --stale: also re-time every kernel family with the copy kernel in "
        "this one run, so that every '%% of copy' shares one yardstick (snippets "
        "and experiments are redone only if stale)",
    )
    parser.add_argument(
        "--gpus",
        type=int,
        metavar="G",
        help="with --stale: run its parts at once, one per GPU, on G GPUs of this "
        "machine (all of one model), each part merged into the ledger as it ends",
    )
    parser.add_argument(
        "--split",
        type=int,
        metavar="N",
        help="with --gpus: cut the stale plan into N parts (default 2G)",
    )
    parser.add_argument(
        "--until",
        type=float,
        metavar="S",
        help="with --gpus: start no part after S seconds (a part that does not run "
        "stays stale for the next command)",
    )
    parser.add_argument(
        "--no-sweeps",
        action="store_true",
        help="leave out the shape sweeps that end a run (run them apart with "
        "python -m thousand.bench.sweep --record --stale)",
    )
    parser.add_argument("--shard", metavar="K/N", help="run one of N shards")
    parser.add_argument(
        "--merge", type=int, metavar="N", help="build the ledger from N shards"
    )
    args, rest = parser.parse_known_args(argv)
    if args.stale and (args.shard or args.merge):
        parser.error("--stale runs in one command: it takes no --shard or --merge")
    if (args.redo or args.part) and not args.stale:
        parser.error("--redo and --part go with --stale")
    for option, spec in (("--shard", args.shard), ("--part", args.part)):
        if spec:
            try:
                shards.parse(spec, option)
            except ValueError as e:
                parser.error(str(e))
    if (args.gpus is not None or args.split or args.until) and not args.stale:
        parser.error("--gpus, --split and --until go with --stale")
    if (args.split or args.until) and args.gpus is None:
        parser.error("--split and --until go with --gpus")
    if args.all_kernels and not args.stale:
        parser.error("--all-kernels goes with --stale")
    if args.all_kernels and (args.gpus is not None or args.part):
        parser.error("--all-kernels times every family in one run: no --gpus or --part")
    if args.gpus is not None and args.part:
        parser.error("--gpus runs every part itself: it takes no --part")
    if args.merge is not None and args.merge < 1:
        parser.error("--merge N wants the number of shards, at least 1")
    return args, rest


def main(argv: list[str]) -> int:
    args, rest = parse_args(argv)
    # Nothing of the GPU run may fall back to the CPU backend: say so at once.
    os.environ["THOUSAND_BACKEND"] = "gpu"
    ok, why = gpu_status()
    if not ok:
        print(
            f"python -m thousand.bench records results on an NVIDIA GPU, and there "
            f"is none to use here: {why}\nWithout a GPU, run the CPU layer: pytest",
            file=sys.stderr,
        )
        return 2
    info = device_info()
    print(f"GPU run on {info['name']}", flush=True)
    if args.gpus is not None:
        return _parts_at_once(args, rest)
    started = time.perf_counter()
    old = plan = None
    elsewhere = False
    if args.stale:
        path = L.ledger_path(L.slug(info["name"]))
        old = L.load(path) if path.exists() else None
        site_path = L.ledger_path(L.site_slug())
        elsewhere = path != site_path and site_path.exists()
        try:
            if elsewhere:  # not the site's GPU: only what the site's ledger lacks
                if args.redo or args.all_kernels:
                    raise ValueError(
                        f"--redo and --all-kernels record into the site's ledger "
                        f"({site_path.name}); "
                        f"this GPU is {info['name']}"
                    )
                plan = L.elsewhere_plan(old, L.load(site_path))
                print(
                    f"{info['name']} is not the site's GPU ({site_path.stem}): "
                    f"recording into {path.name} only what {site_path.name} has "
                    "never recorded",
                    flush=True,
                )
            else:
                plan = L.redo_plan(old, set(args.redo))
                if args.all_kernels:  # one run, one copy figure for every ratio
                    plan["kernels"] |= {f.name for f in all_families()}
        except ValueError as e:
            print(e, file=sys.stderr)
            return 2
        if old is not None and not any(plan.values()):
            print(f"{path.relative_to(L.ROOT)} matches the sources: nothing to redo")
            from thousand.bench import sweep

            # sweeps have records too
            return 0 if args.no_sweeps else sweep.main(["--record", "--stale"])
        for line in _leave_for_tools(plan):
            print(line, flush=True)
        if (old is not None or elsewhere) and args.part:
            # Each part is a run of its own, merged like any stale-only run: a
            # name's part is fixed (a hash), so what a part redid stays done.
            k, n = shards.parse(args.part)
            plan = {
                s: {x for x in names if shards.shard_of(x, n) == k}
                for s, names in plan.items()
            }
        if old is not None or elsewhere:
            plan["kernels"].add("copy")  # the ruler every bandwidth ratio needs
        print(
            "redo:",
            *(f"{s}: {', '.join(sorted(v))}" for s, v in plan.items() if v),
            sep="\n  ",
            flush=True,
        )
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if args.merge:  # every shard has run: one ledger from all of them
            junits, bench = shards.gather(args.merge, tmp / "outputs")
        else:
            partial = old is not None or elsewhere
            rc = run_pytest(tmp, rest, args.shard, plan if partial else None)
            if rc != 0:
                print(f"\nthe GPU layer failed (pytest exit {rc}): no ledger written")
                return rc
            if args.shard:
                k, n = shards.parse(args.shard)
                meta = {"gpu_uuid": shards.gpu_uuid(), "commit": git_commit()}
                kept = shards.keep(tmp, k, n, meta)
                print(
                    f"\nshard {args.shard} passed: {kept.relative_to(L.ROOT)}; when "
                    f"every shard has run, python -m thousand.bench --merge {n}"
                )
                return 0
            junits = [tmp / "junit.xml"]
            bench = json.loads((tmp / "bench.json").read_text())
        checks, *ok_sets = read_checks(*junits)
        ok = dict(zip(("snippets", "notebooks", "experiments"), ok_sets, strict=True))
        command = "python -m thousand.bench"
        if args.merge:
            n = args.merge
            command += f" --shard K/{n} (K = 1..{n}), then --merge {n}"
        if old is not None:
            command += " --stale" + "".join(f" --redo {r}" for r in args.redo)
            command += f" --part {args.part}" if args.part else ""
        with L.merging(L.ledger_path(L.slug(info["name"]))):
            if args.part:  # other parts may have finished since this one started
                old = L.load(path) if path.exists() else None
            ledger = build_ledger(
                bench, checks, tmp / "outputs", ok, command=command, old=old, plan=plan
            )
            path = L.write(ledger)
    print_summary(ledger)
    print(
        f"\nwrote {path.relative_to(L.ROOT)}, docs/assets/outputs/"
        f"{ledger['device']['slug']}/ and the notebooks' outputs"
    )
    print(
        "before committing them, run `python -m thousand.site drift` and re-read "
        "the posts it lists: their figures moved, the sentences about them did not"
    )
    if old is not None:
        took = time.perf_counter() - started
        families = sorted(plan["kernels"] - {"copy"})
        verdict = ""
        if len(families) == 1:  # the target: one changed family in under 3 minutes
            verdict = "; target for one family: under 180 s: " + (
                "met" if took < 180 else "NOT met"
            )
        print(
            f"stale-only run: {', '.join(families) or 'no family'} (+ copy), "
            f"{len(plan['snippets'])} snippets, {len(plan['experiments'])} "
            f"experiments, {len(plan['notebooks'])} notebooks in {took:.0f} s on the "
            f"GPU machine{verdict}"
        )
    # The sweeps of the families just re-timed, over the shapes models use, and
    # any sweep never recorded on this GPU (thousand.bench.sweep).
    from thousand.bench import sweep

    swept = 0
    if not args.no_sweeps:
        print("\nshape sweeps against PyTorch:", flush=True)
        swept = sweep.main(["--record", "--stale"])
    stale = L.left_to_record(ledger, args.stale and elsewhere)
    if stale and args.part:  # the other parts, or what waits for a tool
        print("still stale after this part:", *stale, sep="\n  ")
    elif stale:
        print("but the ledger is not complete:", *stale, sep="\n  ")
        return 1
    return swept


# What a stale run leaves stale on a machine without the tool it needs (a module to
# import, what it is, and what needs it), so that the rest is recorded and a later
# run with the tool records these: the GPU machine's 64 MiB of carried packages
# hold cuTile's compilers or the notebooks' kernel, not both.
TOOLS = {
    "cuda.tile": (
        "cuTile Python (pip install 'cuda-tile[tileiras]')",
        {
            "experiments": {"b14-cutile", "b14-cutile-ops"},
            "snippets": {"b14_cutile.py"},
        },
    ),
    "nbclient": ("nbclient, to run the notebook pages", {"notebooks": None}),
    "ipykernel": ("ipykernel, to run the notebook pages", {"notebooks": None}),
}


def _leave_for_tools(plan: dict) -> list[str]:
    """Take out of `plan` what needs a tool this machine lacks; one line for each."""
    import importlib.util

    lines = []
    for module, (what, needs) in TOOLS.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # its parent package is missing
            found = False
        if found:
            continue
        for section, names in needs.items():
            gone = plan[section] if names is None else plan[section] & names
            if gone:
                plan[section] = plan[section] - gone
                listed = ", ".join(sorted(gone))
                lines.append(f"left stale for want of {what}: {listed}")
    return lines


def _parts_at_once(args, rest: list[str]) -> int:
    """--stale --gpus G: parts 1..N on G GPUs at once (thousand.bench.parallel)."""
    from thousand.bench import parallel, sweep

    try:
        gpus, n = parallel.check(args.gpus, args.split, args.until)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    extra = [*(a for r in args.redo for a in ("--redo", r)), *rest]
    print(f"{n} parts on {gpus} GPUs", flush=True)
    rc = parallel.run(gpus, n, args.until, extra)
    swept = 0 if args.no_sweeps else sweep.main(["--record", "--stale"])
    slug = L.slug(device_info()["name"])
    path = L.ledger_path(slug)
    if not path.exists():
        print(f"no part recorded: {path.relative_to(L.ROOT)} was not written")
        return 1
    stale = L.left_to_record(L.load(path), slug != L.site_slug())
    if stale:
        print("the ledger is not complete yet:", *stale, sep="\n  ")
        return 1
    return rc or swept


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
