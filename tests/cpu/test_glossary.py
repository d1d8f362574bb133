"""The glossary (docs/glossary.yml) holds the Chinese pages to one spelling per term."""

import pytest

from thousand.bench.ledger import ROOT
from thousand.site import glossary

ZH = ROOT / "docs" / "zh"
ENTRIES = [e for items in glossary.entries().values() for e in items]


def _zh_text() -> dict[str, str]:
    return {
        p.relative_to(ZH).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(ZH.rglob("*"))
        if p.suffix in {".md", ".ipynb"}
    }


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["en"])
def test_no_chinese_page_uses_a_spelling_the_glossary_avoids(entry):
    found = [
        f"{page}: {word}"
        for page, text in _zh_text().items()
        for word in entry.get("avoid", [])
        if word in text and page != "glossary.md"
    ]
    assert not found, f"{entry['en']} is written {entry['zh']}: " + "; ".join(found)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["en"])
def test_every_term_is_in_use(entry):
    """A glossary of terms no page uses would drift from the pages."""
    text = "\n".join(_zh_text().values())
    for spelling in entry["zh"].split(" / "):
        assert spelling in text, f"no Chinese page uses {spelling} ({entry['en']})"


def test_one_spelling_per_term():
    seen = {}
    for e in ENTRIES:
        assert e["zh"] not in seen, f"{e['zh']} is both {seen[e['zh']]} and {e['en']}"
        seen[e["zh"]] = e["en"]
        assert e["zh"] not in e.get("avoid", [])


def test_both_pages_render_every_term():
    for lang in ("zh", "en"):
        page = glossary.render(lang)
        for e in ENTRIES:
            assert e["zh"] in page and e["en"] in page, (lang, e)
