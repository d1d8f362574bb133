"""The results ledger: one JSON file per GPU model, written only by the GPU run.

It records, for the device it ran on, every kernel version's check and timing and
every snippet's output, each with the sha256 of the source it came from. The CPU
tests compare those hashes with the files as they are now, so a kernel changed
after the last GPU run fails CI until the GPU run is redone.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
RESULTS_DIR = ROOT / "docs" / "assets" / "results"
OUTPUTS_DIR = ROOT / "docs" / "assets" / "outputs"
SNIPPETS_DIR = ROOT / "snippets"
DOCS_DIR = ROOT / "docs"
KERNEL_DIR = ROOT / "src" / "thousand" / "kernels"
SCHEMA = 1


def sha256_of(*paths: Path) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def family_sources(family: str) -> list[Path]:
    """The .cu file, the local headers it includes, and the .py launchers."""
    cu = KERNEL_DIR / f"{family}.cu"
    headers = re.findall(r'#include\s+"([^"]+)"', cu.read_text())
    return [cu, *(KERNEL_DIR / h for h in headers), KERNEL_DIR / f"{family}.py"]


def family_sha256(family: str) -> str:
    return sha256_of(*family_sources(family))


def snippets() -> list[Path]:
    return sorted(SNIPPETS_DIR.glob("*.py"))


def snippet_sha256(path: Path) -> str:
    """The snippet, and the .cu file of the same name beside it if it has one."""
    cu = path.with_suffix(".cu")
    return sha256_of(path, *([cu] if cu.exists() else []))


def notebooks() -> list[Path]:
    """The notebook pages; the GPU run executes them and writes their outputs."""
    return sorted(DOCS_DIR.glob("*/notebooks/*.ipynb"))


def notebook_source_sha256(path: Path) -> str:
    """The cells as written (kind and source), not what a run printed into them."""
    h = hashlib.sha256()
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        source = cell["source"]
        text = source if isinstance(source, str) else "".join(source)
        h.update(cell["cell_type"].encode() + b"\0" + text.encode() + b"\0")
    return h.hexdigest()


def slug(device_name: str) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3'."""
    return re.sub(r"[^a-z0-9]+", "-", device_name.lower()).strip("-")


def ledger_files() -> list[Path]:
    return sorted(RESULTS_DIR.glob("*.json"))


def load(path_or_slug) -> dict:
    path = Path(path_or_slug)
    if not path.suffix:
        path = RESULTS_DIR / f"{path_or_slug}.json"
    return json.loads(path.read_text())


def write(ledger: dict) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{ledger['device']['slug']}.json"
    path.write_text(
        json.dumps(ledger, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    )
    return path


def stale_entries(ledger: dict) -> list[str]:
    """What in the repository no longer matches this ledger (empty when fresh)."""
    from thousand.kernels.family import all_families

    problems = []
    kernels = ledger.get("kernels", {})
    for family in all_families():
        digest = family_sha256(family.name)
        for v in family.versions:
            entry = kernels.get(v.kernel)
            if entry is None:
                problems.append(f"{v.kernel}: never run on this GPU")
            elif entry["source_sha256"] != digest:
                problems.append(f"{v.kernel}: source changed since the GPU run")
            elif not entry["check"]["passed"]:
                problems.append(f"{v.kernel}: failed its check on the GPU run")
    recorded = ledger.get("snippets", {})
    for path in snippets():
        key = path.name
        entry = recorded.get(key)
        if entry is None:
            problems.append(f"snippets/{key}: never run on this GPU")
            continue
        if entry["sha256"] != snippet_sha256(path):
            problems.append(f"snippets/{key}: changed since the GPU run")
        out = ROOT / entry["output"]
        if not out.exists() or sha256_of(out) != entry["output_sha256"]:
            problems.append(f"{entry['output']}: missing or not what the GPU run wrote")
    from thousand.experiments import all_experiments

    recorded = ledger.get("experiments", {})
    for experiment in all_experiments():
        entry = recorded.get(experiment.name)
        if entry is None:
            problems.append(f"experiment {experiment.name}: never run on this GPU")
        elif entry["sha256"] != experiment.sha256():
            problems.append(f"experiment {experiment.name}: changed since the GPU run")
    recorded = ledger.get("notebooks", {})
    for path in notebooks():
        key = path.relative_to(ROOT).as_posix()
        entry = recorded.get(key)
        if entry is None:
            problems.append(f"{key}: never run on this GPU")
        elif entry["sha256"] != notebook_source_sha256(path):
            problems.append(f"{key}: cells changed since the GPU run")
        elif entry["output_sha256"] != sha256_of(path):
            problems.append(f"{key}: outputs are not what the GPU run wrote")
    return problems
