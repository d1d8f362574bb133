"""`python -m thousand.bench.evidence RUN_ID|ZIP|DIR`: commit a GPU run's evidence.

The `gpu` workflow uploads what a GPU run wrote (the ledger and the snippets'
outputs) as the artifact `gpu-evidence`. This puts it in place and commits it as it
is, in one command: give the workflow run's id (the number in its address; the
artifact is fetched with the GitHub CLI, `gh`), the artifact's zip as the browser
saved it, or a folder it was unpacked into. Before committing, it checks that the
ledger now matches the working tree (nothing new or stale is left), so what is
committed is a record of the code being committed.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from thousand.bench import ledger as L

ARTIFACT = "gpu-evidence"


class EvidenceError(ValueError):
    """A reason not to commit, worded for the person at the terminal."""


def unpack(source: str, into: Path) -> Path:
    """The artifact's folder (holding results/ and outputs/) from a run id, a zip
    or a folder."""
    path = Path(source)
    if path.is_dir():
        return path
    if path.suffix == ".zip" and path.is_file():
        with zipfile.ZipFile(path) as z:
            z.extractall(into)
        return into
    if source.isdigit():
        if shutil.which("gh") is None:
            raise EvidenceError(
                "the GitHub CLI (gh) is not installed: download the artifact "
                f"{ARTIFACT} from the run's page and pass its zip instead"
            )
        done = subprocess.run(
            ["gh", "run", "download", source, "--name", ARTIFACT, "--dir", str(into)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise EvidenceError(f"gh run download {source}: {done.stderr.strip()}")
        return into
    raise EvidenceError(
        f"{source!r}: expected a workflow run's id (digits), the {ARTIFACT} zip or "
        "the folder it was unpacked into"
    )


def install(folder: Path, root: Path = L.ROOT) -> list[Path]:
    """Copy the ledgers and outputs of `folder` into docs/assets; return the
    ledgers. A GPU model's outputs are replaced as a whole, as the run wrote them."""
    ledgers = sorted((folder / "results").glob("*.json"))
    if not ledgers:
        raise EvidenceError(
            f"{folder} holds no results/*.json: is it the {ARTIFACT} artifact?"
        )
    results = root / "docs" / "assets" / "results"
    outputs = root / "docs" / "assets" / "outputs"
    results.mkdir(parents=True, exist_ok=True)
    for ledger in ledgers:
        shutil.copyfile(ledger, results / ledger.name)
        recorded = folder / "outputs" / ledger.stem
        if recorded.is_dir():
            shutil.rmtree(outputs / ledger.stem, ignore_errors=True)
            shutil.copytree(recorded, outputs / ledger.stem)
    for sweep in sorted((folder / "results" / "sweeps").glob("*.json")):
        (results / "sweeps").mkdir(exist_ok=True)  # the shape sweeps' records
        shutil.copyfile(sweep, results / "sweeps" / sweep.name)
    return [results / p.name for p in ledgers]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m thousand.bench.evidence",
        description=f"Put a GPU run's {ARTIFACT} artifact (ledger and outputs) in "
        "docs/assets and commit it as it is.",
        epilog="example: python -m thousand.bench.evidence 123456789",
    )
    p.add_argument("source", help=f"the run's id, the {ARTIFACT} zip, or its folder")
    p.add_argument(
        "--no-commit", action="store_true", help="put the files in place only"
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            written = install(unpack(args.source, Path(tmp)))
        for path in written:
            new, stale = L.new_and_stale(L.load(path))
            if new or stale:
                raise EvidenceError(
                    f"{path.name} does not match the working tree (was the run made "
                    "of another commit?); nothing committed:\n  "
                    + "\n  ".join(new + stale)
                )
    except EvidenceError as e:
        print(f"python -m thousand.bench.evidence: {e}", file=sys.stderr)
        return 1
    runs = {L.load(p)["run"]["commit"][:10] for p in written}
    print(f"in place: {', '.join(p.name for p in written)} (run of {', '.join(runs)})")
    if args.no_commit:
        return 0
    assets = ["docs/assets/results", "docs/assets/outputs"]
    subprocess.run(["git", "add", "--", *assets], cwd=L.ROOT, check=True)
    message = (
        f"Record the GPU run of {', '.join(sorted(runs))} ({ARTIFACT}, as written)"
    )
    done = subprocess.run(["git", "commit", "-m", message, "--", *assets], cwd=L.ROOT)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
