"""A5: the energy of a Hopfield network over its recall sweeps, for a load it can
hold (5 patterns in 100 neurons) and one it cannot (30): it falls either way, but
only the first ends on the stored patterns."""

from __future__ import annotations

import numpy as np

from thousand.experiments import Experiment, Note
from thousand.models import hopfield as H

N, FLIPS, LOADS = 100, 15, (5, 30)


def run(quick: bool) -> dict:
    series, notes = {}, {}
    sweeps = 0
    for p in LOADS:
        P = H.random_patterns(seed=0, p=p, n=N)
        final, energies = H.recall(P, H.corrupt(P, flips=FLIPS, seed=1))
        series[f"{p} patterns"] = [float(e.mean()) for e in energies]
        notes[f"recalled_{p}"] = 100 * float(np.all(final == P, axis=1).mean())
        sweeps = max(sweeps, len(energies))
    for name, values in series.items():  # a run that stopped early stays flat
        series[name] = values + [values[-1]] * (sweeps - len(values))
    return {
        "kind": "lines",
        "x": {"label": "sweep", "values": list(range(sweeps)), "log": False},
        "y": {"label": "mean energy", "log": False, "format": "{:,.1f}"},
        "series": series,
        "notes": notes,
    }


EXPERIMENT = Experiment(
    name="a5-hopfield-energy",
    title={
        "zh": "Hopfield 网络回忆时的能量：容量之内与之外",
        "en": "A Hopfield network's energy during recall, within and past capacity",
    },
    run=run,
    families=("hebbian", "hopfield"),
    notes={
        f"recalled_{p}": Note(
            f"存 {p} 个模式时，完全回忆出的比例 (%)",
            f"{p} patterns stored: share recalled exactly (%)",
            "{:.0f}",
        )
        for p in LOADS
    },
    zh={
        "sweep": "扫描轮次",
        "mean energy": "平均能量",
        **{f"{p} patterns": f"{p} 个模式" for p in LOADS},
    },
)
