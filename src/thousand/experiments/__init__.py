"""Experiments: measurements a post plots that are not one kernel's rung of a ladder.

Bandwidth over transfer size, time over block size, a stream timeline: each is a
module here, `b5_transfers.py`, that defines

    EXPERIMENT = Experiment(name="b5-transfers", title={...}, run=run, ...)

`run(quick)` measures and returns a result (schema below). The GPU run
(`python -m thousand.bench`) runs every experiment in full and records its result in
the ledger; a page shows it with `<!-- results:experiment b5-transfers -->` (a chart
and a table, drawn from the ledger). The CPU layer runs each experiment that the CPU
backend can run with `quick=True`, to prove the code works (those times are CPU
emulation times and are never recorded); one that needs the hardware (pinned memory,
streams, the SASS of a cubin) states why in `gpu_only` and stops with that reason.

A result is a dict:

    kind    "lines" (y over a numeric x), "bars" (y per category) or "timeline"
    x       {"label": str, "values": [...], "log": bool}   (lines, bars)
    y       {"label": str, "log": bool, "format": "{:,.0f}"} (lines, bars)
    series  {name: [value or None per x]}                   (lines, bars)
    lanes   {lane: [[label, start_ms, end_ms], ...]}        (timeline)
    notes   {key: number}: the figures the prose talks about, each described in
            the experiment's `notes` (both languages and a format)
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from thousand.bench import ledger as L

HERE = Path(__file__).resolve().parent
KINDS = ("lines", "bars", "timeline")


class ExperimentError(ValueError):
    pass


@dataclass(frozen=True)
class Note:
    zh: str
    en: str
    format: str = "{:,.2f}"


@dataclass(frozen=True)
class Experiment:
    name: str  # "b5-transfers": the ledger key and the directive's argument
    title: dict  # {"zh": ..., "en": ...}: caption and alt text of the chart
    run: Callable[[bool], dict]  # run(quick) -> result
    # Kernel families whose sources the result depends on (hashed with the module).
    families: tuple[str, ...] = ()
    # Other files of the package it depends on, relative to src/thousand (a model,
    # its data): hashed too, so that changing one makes the result stale.
    files: tuple[str, ...] = ()
    # Why the CPU backend cannot run it, or None.
    gpu_only: str | None = None
    notes: dict[str, Note] = field(default_factory=dict)
    # Chinese for every axis label, series and lane name its results use: the
    # Chinese page's chart and table speak Chinese (see site.experiments).
    zh: dict[str, str] = field(default_factory=dict)

    @property
    def module(self) -> str:
        """The module that defines it: b5-transfers lives in b5_transfers.py."""
        return self.name.replace("-", "_")

    def sources(self) -> list[Path]:
        files = [HERE / f"{self.module}.py"]
        for family in self.families:
            files += L.family_sources(family)
        return files + [HERE.parent / f for f in self.files]

    def sha256(self) -> str:
        return L.sha256_of(*self.sources())


def require_gpu(experiment: Experiment) -> None:
    """Stop with the experiment's reason when the kernels run on the CPU backend."""
    from thousand.cuda import on_cpu

    if on_cpu() and experiment.gpu_only:
        raise ExperimentError(
            f"{experiment.name} runs only on a GPU: {experiment.gpu_only}"
        )


def all_experiments() -> list[Experiment]:
    found = []
    for path in sorted(HERE.glob("[ab][0-9]*_*.py")):  # a track letter, a number
        mod = importlib.import_module(f"thousand.experiments.{path.stem}")
        exp = mod.EXPERIMENT
        if exp.module != path.stem:
            want = path.stem.replace("_", "-")
            raise ExperimentError(f"{path.name} defines {exp.name!r}; name it {want!r}")
        found.append(exp)
    names = [e.name for e in found]
    if len(set(names)) != len(names):
        raise ExperimentError(f"two experiments share a name: {sorted(names)}")
    return found


def by_name(name: str) -> Experiment:
    for e in all_experiments():
        if e.name == name:
            return e
    known = [e.name for e in all_experiments()]
    raise ExperimentError(f"no experiment {name!r}; there are {known}")


def _finite(v) -> bool:
    return v is None or (isinstance(v, (int, float)) and math.isfinite(v))


def validate(experiment: Experiment, result: dict) -> dict:
    """The result, or an ExperimentError that says what is wrong with it."""
    where = f"experiment {experiment.name}"
    kind = result.get("kind")
    if kind not in KINDS:
        raise ExperimentError(f"{where}: kind {kind!r} is not one of {KINDS}")
    if kind == "timeline":
        lanes = result.get("lanes")
        if not lanes or not all(lanes.values()):
            raise ExperimentError(f"{where}: a timeline needs lanes with spans")
        for lane, spans in lanes.items():
            for span in spans:
                label, start, end = span
                if not (isinstance(label, str) and 0 <= start <= end):
                    raise ExperimentError(f"{where}: bad span {span} in {lane!r}")
    else:
        xs = result.get("x", {}).get("values")
        series = result.get("series")
        if not xs or not series or "label" not in result.get("y", {}):
            raise ExperimentError(f"{where}: needs x values, a y label and series")
        for name, ys in series.items():
            if len(ys) != len(xs) or not all(_finite(v) for v in ys):
                raise ExperimentError(
                    f"{where}: series {name!r} needs {len(xs)} finite values"
                )
        images = result.get("images")  # optional pictures beside the chart
        if images is not None:
            size = math.prod(images.get("shape", ()))
            values = images.get("values") or []
            if not images.get("label") or not values or size < 1:
                raise ExperimentError(f"{where}: images need a label, shape, values")
            for v in values:
                if len(v) != size or not all(_finite(x) for x in v):
                    raise ExperimentError(
                        f"{where}: each image needs {size} finite values"
                    )
    names = labels(result)
    untranslated = sorted(n for n in names if n not in experiment.zh)
    if untranslated:
        raise ExperimentError(f"{where}: no Chinese (zh=) for {untranslated}")
    notes = result.get("notes", {})
    if set(notes) != set(experiment.notes):
        raise ExperimentError(
            f"{where}: notes {sorted(notes)} differ from those it declares "
            f"{sorted(experiment.notes)}"
        )
    if not all(_finite(v) and v is not None for v in notes.values()):
        raise ExperimentError(f"{where}: every note needs a finite number")
    return result


def labels(result: dict) -> list[str]:
    """The words a result shows a reader: axis labels, series and lane names."""
    if result["kind"] == "timeline":
        return list(result["lanes"])
    return [result["x"]["label"], result["y"]["label"], *result["series"]]


def lane_totals(result: dict) -> dict[str, tuple[int, float, float]]:
    """Per lane of a timeline: its spans, its busy milliseconds, when it ends."""
    return {
        lane: (
            len(spans),
            sum(end - start for _, start, end in spans),
            max(end for _, _, end in spans),
        )
        for lane, spans in result["lanes"].items()
    }


def run(experiment: Experiment, quick: bool = False) -> dict:
    require_gpu(experiment)
    return validate(experiment, experiment.run(quick))
