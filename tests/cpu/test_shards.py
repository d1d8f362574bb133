"""A GPU run in shards (thousand.bench.shards): every test in exactly one shard,
and a merge that refuses shards it must not combine."""

import json

import pytest

from thousand.bench import shards


def test_parse():
    assert shards.parse("2/3") == (2, 3)
    for bad in ("0/2", "3/2", "1", "a/b"):
        with pytest.raises(ValueError, match="--shard"):
            shards.parse(bad)


def test_every_test_lands_in_exactly_one_shard():
    ids = [f"tests/gpu/test_kernels.py::test_x[v{i}-{i % 7}]" for i in range(500)]
    for n in (1, 2, 3):
        seen = [shards.shard_of(i, n) for i in ids]
        assert set(seen) == set(range(1, n + 1))  # none empty at this size
        assert seen == [shards.shard_of(i, n) for i in ids]  # stable


def _shard(tmp_path, k, n, uuid, commit="abc"):
    f = tmp_path / f"{k}-of-{n}"
    (f / "outputs").mkdir(parents=True)
    (f / "outputs" / f"s{k}.txt").write_text(str(k))
    (f / "junit.xml").write_text("<testsuites/>")
    (f / "bench.json").write_text(json.dumps({"benchmarks": [{"k": k}]}))
    (f / "meta.json").write_text(json.dumps({"gpu_uuid": uuid, "commit": commit}))


def test_merge_combines_shards_of_one_gpu(tmp_path, monkeypatch):
    monkeypatch.setattr(shards, "SHARDS_DIR", tmp_path)
    _shard(tmp_path, 1, 2, "GPU-1")
    _shard(tmp_path, 2, 2, "GPU-1")
    junits, bench = shards.gather(2, tmp_path / "merged")
    assert len(junits) == 2 and bench["benchmarks"] == [{"k": 1}, {"k": 2}]
    assert sorted(p.name for p in (tmp_path / "merged").iterdir()) == [
        "s1.txt",
        "s2.txt",
    ]


@pytest.mark.parametrize(
    "second,why",
    [(None, "not run yet"), ("GPU-2", "gpu_uuid"), ("GPU-1:other", "commit")],
)
def test_merge_refuses(tmp_path, monkeypatch, second, why):
    monkeypatch.setattr(shards, "SHARDS_DIR", tmp_path)
    _shard(tmp_path, 1, 2, "GPU-1")
    if second:
        uuid, _, commit = second.partition(":")
        _shard(tmp_path, 2, 2, uuid, commit or "abc")
    with pytest.raises(SystemExit, match=why):
        shards.gather(2, tmp_path / "merged")
