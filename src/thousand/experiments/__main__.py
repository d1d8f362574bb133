"""`python -m thousand.experiments [NAME ...] [--quick] [--list]`: run experiments.

Without names, every experiment this backend can run. On a GPU the figures are the
ones the GPU run records; on the CPU backend (--quick is implied) they are CPU
emulation times, printed to show the code works, not to be compared with a GPU.
A named experiment that needs a GPU stops the run before anything starts.
"""

from __future__ import annotations

import argparse
import sys

from thousand.cuda import on_cpu
from thousand.experiments import all_experiments, lane_totals, run


def table(result: dict) -> str:
    if result["kind"] == "timeline":
        lines = [f"{'lane':<24}{'spans':>6}{'busy ms':>10}{'ends at ms':>12}"]
        for lane, (spans, busy, last) in lane_totals(result).items():
            lines.append(f"{lane:<24}{spans:>6}{busy:>10.3f}{last:>12.3f}")
        return "\n".join(lines)
    fmt = result["y"].get("format", "{:,.3g}")
    names = list(result["series"])
    width = max(12, *(len(n) + 2 for n in names))
    lines = [
        f"{result['x']['label']:<24}" + "".join(f"{n:>{width}}" for n in names),
    ]
    for i, x in enumerate(result["x"]["values"]):
        cells = (result["series"][n][i] for n in names)
        lines.append(
            f"{x!s:<24}"
            + "".join(f"{'-' if c is None else fmt.format(c):>{width}}" for c in cells)
        )
    return "\n".join(lines)


def parser(names: list[str]) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m thousand.experiments",
        description="Run experiments and print their tables (on the CPU backend: "
        "small, and CPU emulation times).",
    )
    p.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="default: every experiment this backend can run; one of: "
        + ", ".join(names),
    )
    p.add_argument("--quick", action="store_true", help="small (implied on a CPU)")
    p.add_argument("--list", action="store_true", help="list them; run nothing")
    return p


def main(argv: list[str] | None = None) -> int:
    experiments = {e.name: e for e in all_experiments()}
    p = parser(list(experiments))
    args = p.parse_args(argv)
    unknown = [n for n in args.names if n not in experiments]
    if unknown:  # argparse's choices would print the whole list once per name
        p.error(
            f"no experiment {', '.join(map(repr, unknown))}; choose from "
            + ", ".join(experiments)
        )
    if args.list:
        for e in experiments.values():
            gpu = f"  (GPU only: {e.gpu_only})" if e.gpu_only else ""
            print(f"{e.name:<22}{e.title['en']}{gpu}")
        return 0
    cpu = on_cpu()
    if args.names:
        chosen = [experiments[n] for n in dict.fromkeys(args.names)]
        blocked = [e for e in chosen if cpu and e.gpu_only]
        if blocked:  # before any runs: a long run should not end in this
            for e in blocked:
                print(f"{e.name} runs only on a GPU: {e.gpu_only}", file=sys.stderr)
            return 1
    else:
        chosen = [e for e in experiments.values() if not (cpu and e.gpu_only)]
    for e in chosen:
        result = run(e, quick=args.quick or cpu)
        print(f"\n== {e.name}: {e.title['en']}")
        print(table(result))
        for key, note in e.notes.items():
            print(f"{note.en}: {note.format.format(result['notes'][key])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
