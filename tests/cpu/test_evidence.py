"""python -m thousand.bench.evidence: a GPU run's `gpu-evidence` artifact put in
place as it is, from its folder or its zip, and refused when it is something else."""

import shutil
import zipfile

import pytest

from thousand.bench import evidence as E
from thousand.bench import ledger as L


@pytest.fixture
def artifact(tmp_path):
    """The artifact as upload-artifact lays it out: results/ and outputs/ at its
    root (their common folder, docs/assets, is left out)."""
    folder = tmp_path / "gpu-evidence"
    shutil.copytree(L.RESULTS_DIR, folder / "results")
    shutil.copytree(L.OUTPUTS_DIR, folder / "outputs")
    return folder


def test_a_folder_is_installed_as_it_is(artifact, tmp_path):
    root = tmp_path / "repo"
    (root / "docs" / "assets" / "outputs" / "nvidia-h200").mkdir(parents=True)
    (root / "docs" / "assets" / "outputs" / "nvidia-h200" / "gone.txt").write_text("x")
    written = E.install(E.unpack(str(artifact), tmp_path / "unused"), root)
    assert [p.name for p in written] == [p.name for p in L.ledger_files()]
    for ledger in written:
        assert ledger.read_bytes() == (L.RESULTS_DIR / ledger.name).read_bytes()
        outputs = root / "docs" / "assets" / "outputs" / ledger.stem
        assert sorted(p.name for p in outputs.iterdir()) == sorted(
            p.name for p in (L.OUTPUTS_DIR / ledger.stem).iterdir()
        )  # a GPU model's outputs replaced as a whole: gone.txt is gone


def test_a_zip_is_unpacked(artifact, tmp_path):
    archive = tmp_path / "gpu-evidence.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in artifact.rglob("*"):
            z.write(path, path.relative_to(artifact).as_posix())
    folder = E.unpack(str(archive), tmp_path / "unpacked")
    assert sorted(p.name for p in (folder / "results").glob("*.json")) == sorted(
        p.name for p in L.ledger_files()
    )


def test_anything_else_is_refused(tmp_path):
    with pytest.raises(E.EvidenceError, match="expected a workflow run's id"):
        E.unpack("not-a-run", tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(E.EvidenceError, match="holds no results/"):
        E.install(tmp_path / "empty", tmp_path)
    assert E.main(["not-a-run"]) == 1


def test_the_sweeps_records_come_with_it(artifact, tmp_path):
    sweeps = artifact / "results" / "sweeps"
    sweeps.mkdir(exist_ok=True)
    (sweeps / "some-gpu.json").write_text('{"schema": 1}')
    root = tmp_path / "repo"
    E.install(artifact, root)
    got = root / "docs" / "assets" / "results" / "sweeps" / "some-gpu.json"
    assert got.read_text() == '{"schema": 1}'
