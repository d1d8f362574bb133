"""The recorded sweeps (docs/assets/results/sweeps/): valid, fresh, complete, and
drawable as the site draws them."""

import pytest

from thousand.bench import ledger as L
from thousand.bench import sweep as S
from thousand.experiments import validate

RECORDED = S.records()


def test_every_sweep_is_recorded():
    missing = sorted(set(S.SWEEPS) - set(RECORDED))
    assert not missing, (
        f"waiting for the GPU run (no recorded sweep of {', '.join(missing)}): "
        "python -m thousand.bench.sweep --record --stale"
    )


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_recorded_sweep_is_fresh(name):
    why = S.stale(name, RECORDED[name])
    assert why is None, f"{why}: python -m thousand.bench.sweep --record --stale"


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_recorded_sweep_draws_as_an_experiment(name):
    result = validate(S.experiment(name), S.as_result(name, RECORDED[name]))
    assert len(result["x"]["values"]) == len(
        [r for r in RECORDED[name]["rows"] if "ratio" in r]
    )


def test_a_changed_shape_makes_a_sweep_stale(monkeypatch):
    before = S.fingerprint("softmax")
    monkeypatch.setitem(S.SWEEPS, "softmax", ((1024, 768),))
    assert S.fingerprint("softmax") != before
    entry = {"fingerprint": before}
    assert "changed" in S.stale("softmax", entry)


def test_a_changed_kernel_makes_a_sweep_stale(monkeypatch):
    before = S.fingerprint("gelu")
    monkeypatch.setattr(L, "family_fingerprint", lambda name: "another")
    assert S.fingerprint("gelu") != before


def test_shape_labels():
    assert S.shape_label("softmax", (8192, 1024)) == "8,192 x 1,024"
    assert S.shape_label("gelu", (2**27,)) == "2^27"
    assert S.shape_label("adamw", (12_300_000,)) == "12,300,000"
    assert S.shape_label("conv", S.RESNET50[1]) == "56x56 64->64 3x3"
    assert S.shape_label("embedding", S.EMBEDDINGS[1]) == "B8 T1024 C768 V50,257"


def test_summary_states_the_minimum_and_the_front_doors():
    rows = [
        {"shape": [1], "ratio": 1.5, "front_door_ratio": 1.4},
        {"shape": [2], "ratio": 0.9, "front_door_ratio": 0.8},
        {"shape": [3], "refused": "too big"},
    ]
    s = S.summary(rows)
    assert (s["min_ratio"], s["min_at"], s["max_ratio"]) == (0.9, [2], 1.5)
    assert (s["front_door_min"], s["front_door_min_at"]) == (0.8, [2])
    assert (s["shapes"], s["rated"]) == (3, 2)


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--stale"], "--stale goes with --record"),
        (["--record", "--stale", "--family", "gelu"], "give no --family"),
        (["--family", "nope"], "invalid choice"),
    ],
)
def test_bad_arguments_are_named(argv, says, capsys):
    with pytest.raises(SystemExit) as e:
        S.main(argv)
    assert e.value.code == 2
    assert says in capsys.readouterr().err


def test_without_a_gpu_it_says_so(capsys, monkeypatch):
    import thousand.cuda as cuda

    monkeypatch.setattr(cuda, "gpu_status", lambda: (False, "no NVIDIA driver"))
    assert S.main(["--family", "gelu"]) == 2
    assert "times GPUs: no NVIDIA driver" in capsys.readouterr().err


@pytest.mark.parametrize("call", [S.fingerprint, S.experiment])
def test_an_unknown_family_is_named(call):
    with pytest.raises(ValueError, match="no sweep of 'nope'; there are: adamw, conv"):
        call("nope")


def test_an_entry_without_rows_is_refused():
    with pytest.raises(ValueError, match="a record entry has a list of rows"):
        S.as_result("softmax", {"rows": None})
