"""The charts the site draws with matplotlib (site.charts): their text stays text,
reads at a phone's width, and speaks the page's language."""

import re

import pytest

from thousand.site import access, charts
from thousand.site.render import Results

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module", params=["zh", "en"])
def drawn(request):
    """One chart of every kind in one language: a timeline, horizontal and
    vertical bars, log-scale lines, bars with pictures, a ladder, a series, and
    access pictures (panels and a launch map)."""
    lang = request.param
    r = Results("nvidia-h200", lang)
    found = {}
    for name in ("b5-streams", "b18-launch-cost", "b13-triton-matmul",
                 "b5-transfers", "b9-wgmma"):  # fmt: skip
        if name in r.ledger.get("experiments", {}):
            from thousand.experiments import by_name
            from thousand.site import experiments

            entry = r.ledger["experiments"][name]
            e = by_name(name)
            found[name] = experiments.draw(e, entry["result"], e.title[lang], lang)
    families = sorted({k["family"] for k in r.ledger["kernels"].values()})
    found["ladder"] = r.draw_ladder(families[0])
    for name in list(r.ledger["series"])[:1]:
        found[name] = r.draw(name)
    for name in ("transpose-banks", "coordinates-2d"):
        found[name] = access.draw(name, lang)
    return lang, found


def test_chart_text_is_text_and_legible_at_phone_width(drawn):
    lang, found = drawn
    assert len(found) >= 6, sorted(found)
    for name, svg in found.items():
        width, sizes = charts.text_sizes(svg)
        assert sizes, f"{name}: no <text> (drawn as paths?)"
        assert width <= charts.WIDTH * 72 + 1, (name, width)
        px = charts.rendered_px(svg)
        assert px >= charts.LEGIBLE_PX, f"{name} ({lang}): smallest text {px:.1f} px"
        assert b"<text" in svg and b"sans-serif" in svg, name


def test_chart_speaks_the_page_language(drawn):
    lang, found = drawn
    for name, svg in found.items():
        has_chinese = bool(CJK.search(svg.decode()))
        assert has_chinese == (lang == "zh"), f"{name} ({lang})"


@pytest.mark.parametrize(
    "x, base, text",
    [(0.01, 10, "0.01"), (512, 2, "512"), (2**20, 2, "2²⁰"), (4096, 10, "4,096"),
     (1e6, 10, "10⁶"), (3e-5, 10, "3×10⁻⁵"), (2**-9, 2, "0.00195"),
     (2**-3, 2, "0.125"), (2.5, 10, "2.5")],
)  # fmt: skip
def test_log_ticks_are_plain_text(x, base, text):
    assert charts.plain(x, base) == text


def test_wrap_keeps_punctuation_with_its_word():
    lines = charts.wrap("PyTorch 算子（x.neg_()）", 22).split("\n")
    assert lines == ["PyTorch 算子", "（x.neg_()）"]
    assert all(len(line) <= 50 for line in charts.wrap("word " * 40).split("\n"))


def test_a_chart_drawn_twice_is_the_same_bytes(drawn):
    """The SVG's element ids come from the chart (svg.hashsalt), not at random: a
    build that changed no figure changes no chart file."""
    from thousand.site import access

    lang, found = drawn
    assert access.draw("coordinates-2d", lang) == found["coordinates-2d"]
    assert b"<image" in found["b9-wgmma"]  # pictures have ids of their own too
