"""`python -m thousand.scaffold.todo [ROOT]`: every TODO(scaffold) still to write.

Prints `path:line: text` for each marker the scaffold left in posts, kernels,
snippets and tests, and exits 1 while any is left (0 when none is).
"""

import argparse
import sys
from pathlib import Path

from thousand.scaffold import todo_markers


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
    print("\n".join(left) if left else "no TODO(scaffold) left")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
