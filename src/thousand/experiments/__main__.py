"""`python -m thousand.experiments [NAME ...] [--quick]`: run experiments, print them.

Without names, every experiment this backend can run. On a GPU the figures are the
ones the GPU run records; on the CPU backend (--quick is implied) they are CPU
emulation times, printed to show the code works, not to be compared with a GPU.
"""

from __future__ import annotations

import sys

from thousand.cuda import on_cpu
from thousand.experiments import all_experiments, by_name, lane_totals, run


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


def main(argv: list[str]) -> int:
    quick = "--quick" in argv or on_cpu()
    names = [a for a in argv if not a.startswith("--")]
    chosen = [by_name(n) for n in names] or [
        e for e in all_experiments() if not (on_cpu() and e.gpu_only)
    ]
    for e in chosen:
        result = run(e, quick=quick)
        print(f"\n== {e.name}: {e.title['en']}")
        print(table(result))
        for key, note in e.notes.items():
            print(f"{note.en}: {note.format.format(result['notes'][key])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
