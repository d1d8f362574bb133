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
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from thousand.bench import ledger as L
from thousand.bench import shards
from thousand.cuda import device_info, nvcc_path
from thousand.experiments import all_experiments, by_name
from thousand.kernels.family import all_families, tolerance


def run_pytest(tmp: Path, extra: list[str], shard: str | None = None) -> int:
    # THOUSAND_BACKEND=gpu: nothing in the GPU run may fall back to the CPU backend.
    env = {
        **os.environ,
        "THOUSAND_RECORD_DIR": str(tmp / "outputs"),
        "THOUSAND_BACKEND": "gpu",
    }
    if shard:  # tests/conftest.py keeps only this shard's tests
        env["THOUSAND_SHARD"] = shard
    (tmp / "outputs").mkdir()
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-m",
        "gpu",
        "tests",
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


def build_ledger(
    bench: dict,
    checks: dict,
    record_dir: Path,
    ok_snippets: set,
    ok_notebooks: set,
    ok_experiments: set,
    command: str = "python -m thousand.bench",
) -> dict:
    info = device_info()
    slug = L.slug(info["name"])
    by_kind: dict[str, list] = {}
    for b in bench["benchmarks"]:
        by_kind.setdefault(b["extra_info"].get("kind"), []).append(b)

    numpy_ms = {
        b["extra_info"]["family"]: b["stats"]["median"] * 1e3
        for b in by_kind.get("numpy", [])
    }
    torch_ms = {
        b["extra_info"]["family"]: b["extra_info"]["median_ms"]
        for b in by_kind.get("torch", [])
    }
    pycuda_ms = {
        b["extra_info"]["family"]: b["extra_info"]["median_ms"]
        for b in by_kind.get("pycuda", [])
    }
    torch_version = next(
        (b["extra_info"]["torch"] for b in by_kind.get("torch", [])), None
    )
    families = {f.name: f for f in all_families()}
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

    peak = max(k["gbps"] for k in kernels.values() if k["family"] == "copy")
    for k in kernels.values():
        if "gbps" in k:
            k["pct_of_copy"] = 100 * k["gbps"] / peak
        if k["numpy_ms"]:
            k["speedup_vs_numpy"] = k["numpy_ms"] / k["median_ms"]
        if k["torch_ms"]:
            k["pct_of_torch"] = 100 * k["torch_ms"] / k["median_ms"]
        if k["pycuda_ms"]:
            k["speedup_vs_pycuda"] = k["pycuda_ms"] / k["median_ms"]

    out_dir = L.OUTPUTS_DIR / slug
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    snippet_entries = {}
    for path in L.snippets():
        if path.name not in ok_snippets:
            raise SystemExit(f"snippet {path.name} did not pass: not recording")
        target = out_dir / f"{path.stem}.txt"
        shutil.copyfile(record_dir / f"{path.stem}.txt", target)
        snippet_entries[path.name] = {
            "sha256": L.snippet_sha256(path),
            "output": str(target.relative_to(L.ROOT)),
            "output_sha256": L.sha256_of(target),
        }

    notebook_entries = {}
    for path in L.notebooks():
        key = path.relative_to(L.ROOT).as_posix()
        if key not in ok_notebooks:
            raise SystemExit(f"notebook {key} did not run: not recording")
        # Same cells, now with this run's outputs: the page shows these.
        shutil.copyfile(record_dir / "notebooks" / key, path)
        notebook_entries[key] = {
            "sha256": L.notebook_source_sha256(path),
            "output_sha256": L.sha256_of(path),
        }

    experiment_entries = {}
    for e in all_experiments():
        if e.name not in ok_experiments:
            raise SystemExit(f"experiment {e.name} did not pass: not recording")
        recorded = record_dir / "experiments" / f"{e.name}.json"
        experiment_entries[e.name] = {
            "sha256": e.sha256(),
            "result": json.loads(recorded.read_text()),
        }

    series = sorted(
        (b["extra_info"] for b in by_kind.get("series", [])), key=lambda e: e["n"]
    )

    def outcome(what: str, best: dict, ratio: float, target: float) -> dict:
        return {
            "what": what,
            "kernel": f"{best['family']}_v{best['version']}",
            "ratio": ratio,
            "target": target,
            "met": ratio >= target,
        }

    def versus_copy(what: str, family: str, target: float, versions=None) -> dict:
        """A family's best version (of `versions`) as a fraction of the copy kernel."""
        mine = [k for k in kernels.values() if k["family"] == family]
        if versions is not None:
            mine = [k for k in mine if k["version"] in versions]
        best = max(mine, key=lambda k: k["gbps"])
        return outcome(what, best, best["gbps"] / peak, target)

    def versus_library(what, family, key, target, versions) -> dict:
        """The fastest of `versions` against a library time `key` (torch_ms, ...)."""
        mine = [
            k
            for k in kernels.values()
            if k["family"] == family and k["version"] in versions
        ]
        best = min(mine, key=lambda k: k["median_ms"])
        if not best.get(key):  # that library is not on this machine: not measured
            return None
        return outcome(what, best, best[key] / best["median_ms"], target)

    reduce_all = [v.number for v in families["reduce"].versions]
    cuda_cores = [v.number for v in families["matmul"].versions if not v.gpu_only]
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
    ]
    targets = [t for t in targets if t is not None]
    return {
        "schema": L.SCHEMA,
        "device": {
            **info,
            "slug": slug,
            "nvcc": nvcc_version(),
            "numpy": np.__version__,
            "torch": torch_version,
            "python": platform.python_version(),
            "copy_peak_gbps": peak,
        },
        "run": {
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": git_commit(),
            "command": command,
        },
        "kernels": kernels,
        "snippets": snippet_entries,
        "notebooks": notebook_entries,
        "series": {
            "b1-cpu-vs-gpu": [
                {k: e[k] for k in ("n", "numpy_ms", "kernel_ms", "with_copies_ms")}
                for e in series
            ]
        },
        "experiments": experiment_entries,
        "targets": targets,
    }


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


def _option(argv: list[str], name: str) -> str | None:
    """Take `name VALUE` out of argv (the rest goes to pytest)."""
    if name not in argv:
        return None
    i = argv.index(name)
    if i + 1 == len(argv):
        raise SystemExit(f"{name} needs a value")
    value = argv[i + 1]
    del argv[i : i + 2]
    return value


def main(argv: list[str]) -> int:
    argv = list(argv)
    shard, merge = _option(argv, "--shard"), _option(argv, "--merge")
    info = device_info()  # fails here, clearly, when there is no GPU or PyCUDA
    print(f"GPU run on {info['name']}", flush=True)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if merge:  # every shard has run: one ledger from all of them
            junits, bench = shards.gather(int(merge), tmp / "outputs")
        else:
            if shard:
                k, n = shards.parse(shard)
            rc = run_pytest(tmp, argv, shard)
            if rc != 0:
                print(f"\nthe GPU layer failed (pytest exit {rc}): no ledger written")
                return rc
            if shard:
                meta = {"gpu_uuid": shards.gpu_uuid(), "commit": git_commit()}
                kept = shards.keep(tmp, k, n, meta)
                print(
                    f"\nshard {shard} passed: {kept.relative_to(L.ROOT)}; when "
                    f"every shard has run, python -m thousand.bench --merge {n}"
                )
                return 0
            junits = [tmp / "junit.xml"]
            bench = json.loads((tmp / "bench.json").read_text())
        checks, *ok = read_checks(*junits)
        command = "python -m thousand.bench"
        if merge:
            command += f" --shard K/{merge} (K = 1..{merge}), then --merge {merge}"
        ledger = build_ledger(bench, checks, tmp / "outputs", *ok, command=command)
    path = L.write(ledger)
    print_summary(ledger)
    print(
        f"\nwrote {path.relative_to(L.ROOT)}, docs/assets/outputs/"
        f"{ledger['device']['slug']}/ and the notebooks' outputs"
    )
    stale = L.stale_entries(ledger)
    if stale:
        print("but the ledger is not complete:", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
