"""`python -m thousand.scaffold.todo [ROOT]`: every TODO(scaffold) still to write.

Prints `path:line: text` for each marker the scaffold left in posts, kernels,
snippets and tests, then the posts' `TODO(scaffold:gpu ...)` placeholders: those
still waiting for the GPU run, and those whose run is recorded, to be replaced by
their directives now. Exits 1 while anything is left to write or replace, 0 when
only placeholders waiting for the GPU run remain, or nothing.
"""

import argparse
import sys
from pathlib import Path

from thousand.scaffold import placeholder_report, todo_markers


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m thousand.scaffold.todo",
        description="List every TODO(scaffold) marker left in posts, kernels, "
        "snippets and tests; exit 1 while any is left.",
    )
    p.add_argument(
        "root",
        nargs="?",
        type=Path,
        default=Path.cwd(),
        metavar="ROOT",
        help="the repository root (default: the current folder)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    p = parser()
    root = p.parse_args(argv).root.resolve()
    # A missing root has no markers either: "none left" would be a false all-clear.
    if not root.is_dir():
        p.error(f"ROOT: {root} is not a folder")
    if not (root / "docs").is_dir():
        p.error(f"ROOT: {root} is not a repository of this project (no docs/)")
    left = todo_markers(root)
    waiting, ready = placeholder_report(root, _ledgers(root))
    print("\n".join(left) if left else "no TODO(scaffold) left")
    if ready:
        print("\nplaceholders to replace now:\n" + "\n".join(ready))
    if waiting:
        print(
            "\nplaceholders waiting for the GPU run (expected until a maintainer's "
            "gpu-ok run records them):\n" + "\n".join(waiting)
        )
    return 1 if left or ready else 0


def _ledgers(root: Path) -> list[dict]:
    import json

    return [
        json.loads(p.read_text(encoding="utf-8"))
        for p in sorted((root / "docs" / "assets" / "results").glob("*.json"))
    ]


if __name__ == "__main__":
    sys.exit(main())
