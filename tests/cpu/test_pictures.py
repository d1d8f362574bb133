"""The memory-access pictures are traced from the kernels as they are now, and they
show what they claim: coalesced vs strided, conflict vs none."""

import json

import pytest

from tests.helpers import require_tool
from thousand.cpu import pictures
from thousand.site import access


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    require_tool("g++")
    require_tool("addr2line")
    out = tmp_path_factory.mktemp("access")
    pictures.write(out)
    return out


@pytest.mark.parametrize("name", sorted(pictures.PICTURES))
def test_committed_picture_matches_a_fresh_trace(fresh, name):
    committed = pictures.OUT_DIR / f"{name}.json"
    assert committed.exists(), f"run `python -m thousand.cpu.pictures` ({name})"
    assert json.loads(committed.read_text()) == json.loads(
        (fresh / f"{name}.json").read_text()
    ), f"{name}.json is stale: run `python -m thousand.cpu.pictures`"


def test_the_pictures_show_what_the_pages_say(fresh):
    def panels(name):
        return json.loads((fresh / f"{name}.json").read_text())["panels"]

    strided, coalesced = panels("neuron-layer-coalescing")
    assert (strided["sectors"], coalesced["sectors"]) == (32, 4)
    assert coalesced["efficiency"] == 1.0
    naive, tiled = panels("transpose-global")
    assert naive["lines"] == 32 and tiled["lines"] == 1
    conflicted, padded = panels("transpose-banks")
    assert (conflicted["conflict"], padded["conflict"]) == (32, 1)
    assert sorted(padded["banks"]) == list(range(32))


def test_every_picture_draws(fresh):
    for name in access.names():
        assert access.draw(name).startswith(b"<?xml")
