"""The results ledger: one JSON file per GPU model, written only by the GPU run.

It records, for the device it ran on, every kernel version's check and timing and
every snippet's output, each with the fingerprint of the code it came from
(`thousand.bench.fingerprint`: CUDA C as tokens without comments, Python as its
syntax tree without docstrings, with the package modules it imports). The CPU tests
compare those fingerprints with the files as they are now, so code that runs
differently after the last GPU run fails CI until the GPU run is redone, while a
comment or a snippet marker does not.

Schema 2: a ledger may gather several runs on the same GPU model. `runs` lists them
(date, commit, command, the GPU's UUID, software versions, the copy kernel's
bandwidth in that run) and every entry names the run that measured it (`"run": i`).
A stale-only run (`python -m thousand.bench --stale`) re-measures what changed, with
the copy kernel and the library baselines beside it, so every ratio in an entry
comes from one run on one GPU. `run` and `device` describe the latest run.

Schema 3: an entry may carry `fingerprint` (and a notebook `outputs_sha256`, the
hash of its code cells' outputs) beside the sha256 of its files' bytes. Where it
does, freshness is judged by the fingerprint; where it does not, by the bytes, as
in schema 2. `python -m thousand.bench.ledger migrate` gives a fingerprint to each
entry whose bytes still match, so that it is provably the run of this very code.
"""

from __future__ import annotations

import ast
import fcntl
import hashlib
import json
import re
import tempfile
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from thousand.bench import fingerprint as F

ROOT = Path(__file__).resolve().parents[3]
RESULTS_DIR = ROOT / "docs" / "assets" / "results"
OUTPUTS_DIR = ROOT / "docs" / "assets" / "outputs"
SNIPPETS_DIR = ROOT / "snippets"
DOCS_DIR = ROOT / "docs"
SRC = ROOT / "src"
KERNEL_DIR = ROOT / "src" / "thousand" / "kernels"
SCHEMA = 3
# What a run records about the software it ran with (the hardware is the ledger's).
SOFTWARE = (
    "driver_release",
    "cuda_driver_api",
    "nvcc",
    "python",
    "pycuda",
    "pycuda_cuda_version",
    "numpy",
    "torch",
)
SECTIONS = ("kernels", "snippets", "experiments", "notebooks")


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


def family_fingerprint(family: str) -> str:
    """The family's sources by behaviour, with the package code its launcher uses."""
    return F.fingerprint(family_sources(family), SRC)


def snippets() -> list[Path]:
    return sorted(SNIPPETS_DIR.glob("*.py"))


def snippet_sources(path: Path) -> list[Path]:
    """The snippet, and the .cu file of the same name beside it if it has one."""
    cu = path.with_suffix(".cu")
    return [path, *([cu] if cu.exists() else [])]


def snippet_sha256(path: Path) -> str:
    return sha256_of(*snippet_sources(path))


def snippet_fingerprint(path: Path) -> str:
    return F.fingerprint(snippet_sources(path), SRC)


def experiment_fingerprint(experiment) -> str:
    """An experiment's module, its families' sources and its files, by behaviour,
    with the package code they import."""
    return F.fingerprint(experiment.sources(), SRC)


def notebooks() -> list[Path]:
    """The notebook pages; the GPU run executes them and writes their outputs."""
    return sorted(DOCS_DIR.glob("*/notebooks/*.ipynb"))


def notebook_source_sha256(path: Path) -> str:
    """The cells as written (kind and source), not what a run printed into them."""
    h = hashlib.sha256()
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        h.update(cell["cell_type"].encode() + b"\0" + _cell_text(cell).encode() + b"\0")
    return h.hexdigest()


def notebook_fingerprint(path: Path) -> str:
    """The code cells by behaviour, with the package code they import. Markdown
    cells are left out: they do not run, and what the ledger records of a notebook
    (the fingerprint and `outputs_sha256`) is the code and what it printed."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = tuple(_cell_text(c) for c in cells if c["cell_type"] == "code")
    return F.fingerprint([], SRC, cells=code)


def notebook_outputs_sha256(path: Path) -> str:
    """What the code cells printed, as the GPU run wrote it (not the cells' text,
    nor the Markdown around them)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    outputs = [c.get("outputs", []) for c in cells if c["cell_type"] == "code"]
    text = json.dumps(outputs, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _cell_text(cell: dict) -> str:
    """A notebook cell's source, stored as one string or as a list of lines."""
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def slug(device_name: str) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3'."""
    return re.sub(r"[^a-z0-9]+", "-", device_name.lower()).strip("-")


def ledger_files() -> list[Path]:
    return sorted(RESULTS_DIR.glob("*.json"))


# -- the site's ledger and the others -----------------------------------------------
#
# The site renders one GPU's ledger (mkdocs.yml: extra.results), which must hold
# everything. A point first recorded on another GPU, because the site's GPU could
# not be had, goes into that GPU's own ledger, which holds only such points; its
# posts name it in their front matter (`results: <slug>`) and render from it, with
# that GPU named on the page. What the site's ledger has recorded and is now stale
# must be redone on the site's GPU: another ledger takes only what is new.


def ledger_path(slug: str) -> Path:
    """Where the ledger of the GPU named `slug` lives."""
    return RESULTS_DIR / f"{slug}.json"


def site_slug() -> str:
    """The slug of the GPU whose ledger the site renders (mkdocs.yml)."""
    found = re.search(
        r"^\s+results:\s*([\w.-]+)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M
    )
    if not found:
        raise ValueError("mkdocs.yml names no ledger under extra: results: <slug>")
    return found.group(1)


def never_recorded(ledger: dict) -> set[tuple[str, str]]:
    """(section, name) of everything the ledger has never recorded."""
    return {(s, n) for s, n, p in stale_subjects(ledger) if p.endswith(NEVER_RUN)}


def new_elsewhere(site: dict, others: list[dict]) -> dict[str, set]:
    """What the site's ledger has never recorded, by (section, name), split into
    what some other ledger records as it is now (recorded) and what none does
    (waiting)."""
    new = never_recorded(site)
    lacking = [{(s, n) for s, n, _ in stale_subjects(o)} for o in others]
    recorded = {x for x in new if any(x not in lacks for lacks in lacking)}
    return {"recorded": recorded, "waiting": new - recorded}


def elsewhere_plan(old: dict | None, site: dict) -> dict[str, set]:
    """What a GPU other than the site's records: what the site's ledger has never
    recorded, less what this GPU's own ledger (`old`) already holds as it is now."""
    todo = never_recorded(site)
    if old is not None:
        todo &= {(s, n) for s, n, _ in stale_subjects(old)}
    plan: dict[str, set] = {s: set() for s in SECTIONS}
    for section, name in todo:
        plan[section].add(name)
    return plan


def load(path_or_slug) -> dict:
    path = Path(path_or_slug)
    if not path.suffix:
        path = ledger_path(path_or_slug)
    return upgrade(json.loads(path.read_text()))


def upgrade(ledger: dict) -> dict:
    """An older ledger read as schema 3: schema 1 (one run measured everything) as
    its one run; schema 2 as it is, its entries judged by their bytes (none has a
    fingerprint until `migrate` gives it one)."""
    schema = ledger.get("schema", 1)
    if schema >= SCHEMA:
        return ledger
    if schema == 2:
        return {**ledger, "schema": SCHEMA}
    if "run" not in ledger:
        return ledger
    d = ledger.get("device", {})
    run = {**ledger["run"], **{k: d.get(k) for k in SOFTWARE}}
    run["copy_peak_gbps"] = d.get("copy_peak_gbps")
    out = {**ledger, "schema": SCHEMA, "runs": [run]}
    for section in SECTIONS:
        out[section] = {k: {**e, "run": 0} for k, e in ledger.get(section, {}).items()}
    out["series_runs"] = {name: 0 for name in ledger.get("series", {})}
    return out


def run_of(ledger: dict, entry: dict) -> dict:
    """The run that measured `entry` (a kernel, snippet, experiment or notebook)."""
    return ledger["runs"][entry.get("run", 0)]


@contextmanager
def merging(path: Path):
    """Hold the one writer's lock of the ledger at `path` (a file beside it in the
    system's temporary folder), so that parts of a stale run finishing at once on
    several GPUs of one machine each merge into the ledger as the last one left it."""
    lock = Path(tempfile.gettempdir()) / f"thousand-ledger-{path.stem}.lock"
    with lock.open("w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def write(ledger: dict) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = ledger_path(ledger["device"]["slug"])
    path.write_text(
        json.dumps(ledger, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    )
    return path


class _Now:
    """A digest of the files as they are now, computed once and only if asked."""

    def __init__(self, compute):
        self.compute, self.value = compute, None

    def __call__(self) -> str:
        if self.value is None:
            self.value = self.compute()
        return self.value


def _changed(entry: dict, byte_key: str, now: _Now, bytes_now: _Now) -> bool:
    """Whether an entry's code changed: by its fingerprint where it has one, else
    (an entry not yet migrated) by the sha256 of the files' bytes."""
    if "fingerprint" in entry:
        return entry["fingerprint"] != now()
    return entry[byte_key] != bytes_now()


def _outputs_match(entry: dict, path: Path) -> bool:
    """A notebook's outputs are what the GPU run wrote: its code cells' outputs
    where the entry records them, else the whole file's bytes."""
    if "outputs_sha256" in entry:
        return entry["outputs_sha256"] == notebook_outputs_sha256(path)
    return entry["output_sha256"] == sha256_of(path)


def stale_entries(ledger: dict) -> list[str]:
    """What in the repository no longer matches this ledger (empty when fresh)."""
    return [problem for _, _, problem in stale_subjects(ledger)]


# Every message about something the GPU run has not recorded yet ends with this, so
# that a contributor reads the same three facts wherever CI stops on a new point.
NEVER_RUN = "never run on this GPU"
WAITING = (
    "New, so this is expected until its GPU run: a maintainer adds the label "
    "`gpu-ok` to the pull request, and the GPU job records what is new or changed "
    "(python -m thousand.bench --stale). Until then, preview the pages with the "
    "unrecorded results shown as boxes: THOUSAND_ALLOW_UNRECORDED=1 python -m "
    "thousand.site serve. After it, commit the run's evidence with python -m "
    "thousand.bench.evidence RUN_ID, then put the results directives in place of "
    "the scaffold's `TODO(scaffold:gpu ...)` placeholders."
)


def new_and_stale(ledger: dict) -> tuple[list[str], list[str]]:
    """Split what the ledger does not match into (new, stale): new is absent from
    the ledger altogether (a point waiting for its first GPU run); stale was
    recorded, and its code or output changed since."""
    new, stale = [], []
    for _, _, problem in stale_subjects(ledger):
        (new if problem.endswith(NEVER_RUN) else stale).append(problem)
    return new, stale


def left_to_record(ledger: dict, elsewhere: bool) -> list[str]:
    """What keeps a ledger from complete after a run: everything stale in it, or,
    in the ledger of a GPU other than the site's (`elsewhere`: it holds only what
    it was given), only what it recorded and has gone stale since."""
    return new_and_stale(ledger)[1] if elsewhere else stale_entries(ledger)


def stale_subjects(ledger: dict) -> list[tuple[str, str, str]]:
    """(section, name, problem) for each thing the ledger no longer matches:
    section is "kernels" (name: the family), "snippets", "experiments" or
    "notebooks" (name: the ledger key)."""
    from thousand.experiments import all_experiments
    from thousand.kernels.family import all_families

    problems = []

    def stale(section: str, name: str, problem: str) -> None:
        problems.append((section, name, problem))

    kernels = ledger.get("kernels", {})
    for family in all_families():
        now = _Now(partial(family_fingerprint, family.name))
        bytes_now = _Now(partial(family_sha256, family.name))
        for v in family.versions:
            entry = kernels.get(v.kernel)
            if entry is None:
                stale("kernels", family.name, f"{v.kernel}: {NEVER_RUN}")
            elif _changed(entry, "source_sha256", now, bytes_now):
                stale(
                    "kernels",
                    family.name,
                    f"{v.kernel}: source changed since the GPU run",
                )
            elif not entry["check"]["passed"]:
                stale(
                    "kernels",
                    family.name,
                    f"{v.kernel}: failed its check on the GPU run",
                )
    recorded = ledger.get("snippets", {})
    for path in snippets():
        key = path.name
        entry = recorded.get(key)
        if entry is None:
            stale("snippets", key, f"snippets/{key}: {NEVER_RUN}")
            continue
        now = _Now(partial(snippet_fingerprint, path))
        if _changed(entry, "sha256", now, _Now(partial(snippet_sha256, path))):
            stale("snippets", key, f"snippets/{key}: changed since the GPU run")
        out = ROOT / entry["output"]
        if not out.exists() or sha256_of(out) != entry["output_sha256"]:
            what = f"{entry['output']}: missing or not what the GPU run wrote"
            stale("snippets", key, what)
    recorded = ledger.get("experiments", {})
    for experiment in all_experiments():
        name = experiment.name
        entry = recorded.get(name)
        if entry is None:
            stale("experiments", name, f"experiment {name}: {NEVER_RUN}")
            continue
        now = _Now(partial(experiment_fingerprint, experiment))
        if _changed(entry, "sha256", now, _Now(experiment.sha256)):
            what = f"experiment {name}: changed since the GPU run"
            stale("experiments", name, what)
    recorded = ledger.get("notebooks", {})
    for path in notebooks():
        key = path.relative_to(ROOT).as_posix()
        entry = recorded.get(key)
        if entry is None:
            stale("notebooks", key, f"{key}: {NEVER_RUN}")
            continue
        now = _Now(partial(notebook_fingerprint, path))
        cells = _Now(partial(notebook_source_sha256, path))
        if _changed(entry, "sha256", now, cells):
            stale("notebooks", key, f"{key}: cells changed since the GPU run")
        elif not _outputs_match(entry, path):
            stale("notebooks", key, f"{key}: outputs are not what the GPU run wrote")
    return problems


# -- what a stale-only run must redo ------------------------------------------------


def _module_file(name: str) -> Path | None:
    """The file of a `thousand.*` module (a package's __init__.py), or None."""
    if not name.startswith("thousand"):
        return None
    base = SRC.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.exists():
            return path
    return None


def _imports(source: str) -> set[str]:
    """The `thousand.*` modules Python source imports (a submodule named in a
    `from` import counts as imported)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return {m for m in found if _module_file(m)}


def families_used(paths: list[Path], source: str = "") -> set[str]:
    """The kernel families that Python files (and `source`, a notebook's code)
    reach through their imports, directly or through the package's models."""
    modules = _imports(source)
    todo = list(paths) + [_module_file(m) for m in modules]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in _imports(path.read_text(encoding="utf-8")):
            modules.add(name)
            todo.append(_module_file(name))
    prefix = "thousand.kernels."
    return {
        m[len(prefix) :]
        for m in modules
        if m.startswith(prefix) and (KERNEL_DIR / f"{m[len(prefix) :]}.cu").exists()
    }


def notebook_code(path: Path) -> str:
    """A notebook's code cells as one Python text (for its imports), without the
    IPython lines (%magic, !shell) that are not Python."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join(
        "\n".join(ln for ln in _cell_text(c).splitlines() if ln[:1] not in "%!")
        for c in cells
        if c["cell_type"] == "code"
    )


def redo_plan(ledger: dict | None, extra: set[str] = frozenset()) -> dict[str, set]:
    """What a stale-only run must measure again: the stale entries, everything
    that imports a stale family (a snippet's output may change with its kernels),
    and the names in `extra` (a family, snippet file, experiment or notebook)."""
    from thousand.experiments import all_experiments
    from thousand.kernels.family import all_families

    plan: dict[str, set] = {s: set() for s in SECTIONS}
    if ledger is None:  # nothing recorded on this GPU yet: everything
        plan["kernels"] = {f.name for f in all_families()}
        plan["snippets"] = {p.name for p in snippets()}
        plan["experiments"] = {e.name for e in all_experiments()}
        plan["notebooks"] = {p.relative_to(ROOT).as_posix() for p in notebooks()}
        return plan
    for section, name, _ in stale_subjects(ledger):
        plan[section].add(name)
    known = {
        "kernels": {f.name for f in all_families()},
        "snippets": {p.name for p in snippets()},
        "experiments": {e.name for e in all_experiments()},
        "notebooks": {p.relative_to(ROOT).as_posix() for p in notebooks()},
    }
    for name in extra:
        where = [s for s, names in known.items() if name in names]
        if not where:
            every = sorted(set().union(*known.values()))
            raise ValueError(
                f"--redo {name!r}: no such family, snippet, experiment "
                f"or notebook; known: {', '.join(every)}"
            )
        plan[where[0]].add(name)
    stale = plan["kernels"]
    for path in snippets():
        if families_used([path]) & stale:
            plan["snippets"].add(path.name)
    for e in all_experiments():
        if set(e.families) & stale or families_used(e.sources()[:1]) & stale:
            plan["experiments"].add(e.name)
    for path in notebooks():
        if families_used([], notebook_code(path)) & stale:
            plan["notebooks"].add(path.relative_to(ROOT).as_posix())
    return plan


# -- from byte hashes to fingerprints -----------------------------------------------


def migrate(ledger: dict) -> dict[str, list[str]]:
    """Give a fingerprint to every entry whose sha256 still matches the files'
    bytes (the recorded result is of exactly this code); an entry that does not
    match is left as it is, stale. Changes `ledger` in place, nothing but
    `fingerprint`, `outputs_sha256` and `schema`; returns the keys given a
    fingerprint and the keys left without one, by section."""
    from thousand.experiments import all_experiments

    done: dict[str, list[str]] = {"fingerprinted": [], "left": []}

    def todo(section: str) -> list[tuple[str, dict]]:
        return [
            (key, entry)
            for key, entry in ledger.get(section, {}).items()
            if "fingerprint" not in entry
        ]

    def give(section: str, key: str, entry: dict, fields: dict | None) -> None:
        if fields is None:
            done["left"].append(f"{section}/{key}")
        else:
            entry.update(fields)
            done["fingerprinted"].append(f"{section}/{key}")

    now: dict[str, tuple[str, str] | None] = {}
    for name, entry in todo("kernels"):
        family = entry["family"]
        if family not in now:
            found = (KERNEL_DIR / f"{family}.cu").exists()
            now[family] = (
                (family_sha256(family), family_fingerprint(family)) if found else None
            )
        match = now[family] is not None and entry["source_sha256"] == now[family][0]
        give("kernels", name, entry, {"fingerprint": now[family][1]} if match else None)
    for key, entry in todo("snippets"):
        path = SNIPPETS_DIR / key
        match = path.exists() and entry["sha256"] == snippet_sha256(path)
        fields = {"fingerprint": snippet_fingerprint(path)} if match else None
        give("snippets", key, entry, fields)
    experiments = {e.name: e for e in all_experiments()}
    for key, entry in todo("experiments"):
        e = experiments.get(key)
        match = e is not None and entry["sha256"] == e.sha256()
        fields = {"fingerprint": experiment_fingerprint(e)} if match else None
        give("experiments", key, entry, fields)
    for key, entry in todo("notebooks"):
        path = ROOT / key
        match = (
            path.exists()
            and entry["sha256"] == notebook_source_sha256(path)
            and entry["output_sha256"] == sha256_of(path)
        )
        fields = {
            "fingerprint": notebook_fingerprint(path),
            "outputs_sha256": notebook_outputs_sha256(path),
        }
        give("notebooks", key, entry, fields if match else None)
    ledger["schema"] = SCHEMA
    return done


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m thousand.bench.ledger",
        description="The results ledger's upkeep on the CPU.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser(
        "migrate",
        help="give each entry whose sources' bytes still match a fingerprint "
        "(schema 3); entries that do not match stay stale",
    )
    m.add_argument("ledgers", nargs="*", type=Path, help="default: every ledger")
    args = parser.parse_args(argv)
    for path in args.ledgers or ledger_files():
        ledger = load(path)
        before = len(stale_entries(ledger))
        done = migrate(ledger)
        path.write_text(
            json.dumps(ledger, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        )
        print(
            f"{path.name}: {len(done['fingerprinted'])} entries fingerprinted, "
            f"{len(done['left'])} left as they were (their bytes do not match); "
            f"stale problems before {before}, after "
            f"{len(stale_entries(ledger))}"
        )
        for key in done["left"]:
            print(f"  left: {key}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
