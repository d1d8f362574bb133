"""Experiments (thousand.experiments): declared completely, runnable, drawable.

On the CPU backend an experiment runs small (quick=True) to prove its code works;
its times are emulation times and never recorded. One that needs the hardware must
stop with the reason it declares. The recorded results (from the GPU run) must be
fresh (tests/cpu/test_ledger.py) and render in both languages.
"""

import pytest

from tests.helpers import unavailable
from thousand.bench import ledger as L
from thousand.cuda import NvccMissing, use_backend
from thousand.experiments import (
    Experiment,
    ExperimentError,
    Note,
    all_experiments,
    run,
    validate,
)
from thousand.site import experiments as site

EXPERIMENTS = all_experiments()
IDS = [e.name for e in EXPERIMENTS]


@pytest.fixture
def cpu_backend():
    before = use_backend("cpu")
    yield
    use_backend(before)


@pytest.mark.parametrize("e", EXPERIMENTS, ids=IDS)
def test_declared_in_both_languages(e):
    assert e.title.keys() == {"zh", "en"} and all(e.title.values())
    for note in e.notes.values():
        assert isinstance(note, Note) and note.zh and note.en
        note.format.format(1.5)
    for family in e.families:
        assert L.family_sources(family)[0].exists(), family


@pytest.mark.parametrize("e", EXPERIMENTS, ids=IDS)
def test_runs_on_the_cpu_backend_or_says_why_not(e, cpu_backend):
    if e.gpu_only:
        with pytest.raises(ExperimentError, match="runs only on a GPU"):
            run(e, quick=True)
        return
    try:
        result = run(e, quick=True)  # validates it
    except NvccMissing as missing:  # b6-registers asks nvcc for register counts
        unavailable(str(missing))
    svg = site.draw(e, result, "CPU emulation")
    assert svg.startswith(b"<?xml")
    # pictures beside the chart (A5's RBM filters): one drawn for each recorded
    assert svg.count(b"<image") == len(result.get("images", {}).get("values", []))


def _recorded():
    for path in L.ledger_files():
        for name, entry in L.load(path).get("experiments", {}).items():
            yield pytest.param(name, entry["result"], id=f"{path.stem}:{name}")


@pytest.mark.parametrize("name,result", list(_recorded()))
def test_recorded_results_render_in_both_languages(name, result):
    e = next(x for x in EXPERIMENTS if x.name == name)
    validate(e, result)
    for lang in ("zh", "en"):
        table = site.table(e, result, lang)
        assert table.count("\n") >= 3
        notes = site.notes(e, result, lang)
        assert notes.count("\n") == len(e.notes)
    assert b"<svg" in site.draw(e, result, name)


def test_a_result_missing_its_chinese_or_its_notes_is_refused():
    e = EXPERIMENTS[0] if EXPERIMENTS else None
    if e is None:
        pytest.skip("no experiments yet")
    bad = {
        "kind": "lines",
        "x": {"label": "an untranslated label", "values": [1]},
        "y": {"label": "ms"},
        "series": {"s": [1.0]},
        "notes": {},
    }
    with pytest.raises(ExperimentError, match="no Chinese|notes"):
        validate(e, bad)


def test_a_bar_in_a_series_name_stays_inside_its_cell():
    """A9's 'KL(q(z|x) || p(z))': each | of a name is escaped, so the table keeps
    its columns instead of printing as text."""
    import markdown

    e = Experiment(
        name="a1-x",
        title={"zh": "t", "en": "t"},
        run=lambda quick: {},
        zh={"epoch": "轮", "nats": "奈特", "KL(q(z|x) || p(z))": "KL"},
    )
    result = {
        "kind": "lines",
        "x": {"label": "epoch", "values": [1, 2], "log": False},
        "y": {"label": "nats", "log": False},
        "series": {"KL(q(z|x) || p(z))": [1.0, 2.0]},
    }
    html = markdown.markdown(site.table(e, result, "en"), extensions=["tables"])
    assert html.count("</th>") == 2 and "KL(q(z|x) || p(z))" in html


def test_a_log_axis_of_a_few_values_that_are_not_powers_ticks_each_value():
    """A7's lags 5, 10, 20, 40, 80 on a base-2 axis: ticks at the lags, not at the
    powers of two that no point sits on; powers of two keep the usual ticks."""
    from thousand.site.experiments import _power_of

    assert _power_of(64, 2) and _power_of(0.5, 2) and _power_of(1000, 10)
    assert not _power_of(5, 2) and not _power_of(80, 2) and not _power_of(0, 2)
    e = Experiment(
        name="a1-x",
        title={"zh": "t", "en": "t"},
        run=lambda quick: {},
        zh={"lag": "滞后", "share": "比例", "LSTM": "LSTM"},
    )
    result = {
        "kind": "lines",
        "x": {"label": "lag", "values": [5, 10, 20, 40, 80], "log": True},
        "y": {"label": "share", "log": False},
        "series": {"LSTM": [1.0, 1.0, 0.5, 0.25, 0.13]},
    }
    svg = site.draw(e, result, "t", "en").decode()
    assert svg.count(">80</text>") == 1 and ">64</text>" not in svg
