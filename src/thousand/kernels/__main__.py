"""`python -m thousand.kernels [--small]`: check every version of every family.

Small sizes keep it fast enough to run under compute-sanitizer.
"""

import sys

from thousand.bench.quick import check_all
from thousand.kernels.family import all_families

small = "--small" in sys.argv[1:]
failed = []
for family in all_families():
    sizes = family.check_sizes[:3] if small else None
    if not check_all(family, sizes=sizes):
        failed.append(family.name)
    print(f"{family.name}: {'FAIL' if family.name in failed else 'ok'}")
sys.exit(1 if failed else 0)
