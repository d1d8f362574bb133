"""`python -m thousand.kernels [--small] [--family NAME ...]`: check every version
of every family (or of the families named) against its reference.

Small sizes keep it fast enough to run under compute-sanitizer. Without --family,
$THOUSAND_FAMILIES (comma-separated) picks the families, so that a run started
through another tool (compute-sanitizer) can be narrowed from the environment.
"""

from __future__ import annotations

import argparse
import os
import sys

from thousand.bench.quick import check_all
from thousand.kernels.family import all_families

ENV = "THOUSAND_FAMILIES"


def names_in(text: str) -> list[str]:
    """`a,b, c` -> ['a', 'b', 'c']; empty items dropped."""
    return [n.strip() for n in text.split(",") if n.strip()]


def parser(known: list[str]) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m thousand.kernels",
        description="Check every kernel version of the chosen families against "
        "its reference; exit 1 if any disagrees.",
        epilog=f"families: {', '.join(known)}",
    )
    p.add_argument(
        "--small", action="store_true", help="the first three check sizes only"
    )
    p.add_argument(
        "--family",
        action="append",
        default=[],
        metavar="NAME",
        help=f"check this family (repeat for more; default: ${ENV}, "
        "comma-separated, else every family)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    families = {f.name: f for f in all_families()}
    p = parser(list(families))
    args = p.parse_args(argv)
    asked = [n for given in args.family for n in names_in(given)]
    source = "--family"
    if args.family and not asked:
        p.error("--family: give a family's name")
    if not args.family:
        asked, source = names_in(os.environ.get(ENV, "")), ENV
    unknown = [n for n in asked if n not in families]
    if unknown:
        p.error(
            f"{source}: no family {', '.join(map(repr, unknown))}; "
            f"choose from {', '.join(families)}"
        )
    chosen = [families[n] for n in dict.fromkeys(asked)] or list(families.values())
    if asked:  # a narrowed run says so: a log must not read as a full check
        print(f"checking {len(chosen)} of {len(families)} families ({source})")
    failed = []
    for family in chosen:
        sizes = family.check_sizes[:3] if args.small else None
        if not check_all(family, sizes=sizes):
            failed.append(family.name)
        print(f"{family.name}: {'FAIL' if family.name in failed else 'ok'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
