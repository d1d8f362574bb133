"""`python -m thousand.scaffold.todo [ROOT]`: every TODO(scaffold) still to write.

Prints `path:line: text` for each marker the scaffold left in posts, kernels,
snippets and tests, and exits 1 while any is left (0 when none is).
"""

import sys
from pathlib import Path

from thousand.scaffold import todo_markers


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else Path.cwd()
    left = todo_markers(root.resolve())
    print("\n".join(left) if left else "no TODO(scaffold) left")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
