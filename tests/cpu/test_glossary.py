"""The glossary (docs/glossary.yml) holds the Chinese pages to one spelling per term."""

import shutil
from functools import cache
from types import SimpleNamespace

import pytest

# The site's hooks need MkDocs (the docs extra). The GPU run collects this folder
# with the machine's own packages, which have no MkDocs: there this module is not
# the GPU layer's, and it says so instead of stopping the collection.
pytest.importorskip("mkdocs", reason="the glossary's checks need the docs extra")
from mkdocs.exceptions import PluginError  # noqa: E402

from thousand.bench.ledger import ROOT
from thousand.site import glossary, hooks

ZH = ROOT / "docs" / "zh"
ENTRIES = [e for items in glossary.entries().values() for e in items]


def _zh_text() -> dict[str, str]:
    """The Chinese pages, and the points' titles the track pages show."""
    pages = {
        p.relative_to(ZH).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(ZH.rglob("*"))
        if p.suffix in {".md", ".ipynb"}
    }
    tracks = ZH.parent / "tracks.yml"
    return pages | {"../tracks.yml": tracks.read_text(encoding="utf-8")}


@cache
def _deviations() -> tuple:
    return tuple(glossary.deviations())


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["en"])
def test_no_chinese_page_uses_a_spelling_the_glossary_avoids(entry):
    """The check the Chinese build runs (hooks.check_terms), one entry at a time."""
    found = [str(d) for d in _deviations() if d.en == entry["en"]]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["en"])
def test_every_entry_lists_the_spellings_it_rejects(entry):
    assert entry.get("avoid"), f"{entry['en']} ({entry['zh']}) has no avoid list"


def test_no_term_is_itself_rejected():
    """A variant inside another term (张量核 in 张量核心) needs that term in
    `except`, or every page using the term would fail."""
    for e in ENTRIES:
        for spelling in e["zh"].split(" / "):
            assert not glossary.find(spelling), (spelling, glossary.find(spelling))


def test_every_except_covers_a_variant_of_its_entry():
    for e in ENTRIES:
        for x in e.get("except", []):
            assert any(v in x for v in e["avoid"]), (e["en"], x)


def test_except_spares_only_the_longer_word():
    assert glossary.find("张量核心和 CUDA 核心") == []
    assert [v for _, v, _ in glossary.find("第\n二个张量核")] == ["张量核"]
    assert glossary.find("没有范围约简") == []
    assert [(n, v) for n, v, _ in glossary.find("x\n归约，不是约简")] == [(2, "约简")]
    # reported once, as the longer variant found at that place
    assert [v for _, v, _ in glossary.find("锁页内存")] == ["锁页内存"]


PAGE = "blog/posts/why-gpu.md"
PLANTED = "先把数据拷进锁页内存，再启动核函数。"


@pytest.fixture
def page_copy(tmp_path):
    """docs/zh with one real page: (its docs folder, the copy)."""
    docs = tmp_path / "zh"
    copy = docs / PAGE
    copy.parent.mkdir(parents=True)
    shutil.copyfile(ZH / PAGE, copy)
    return docs, copy


def test_a_planted_variant_fails_the_check_and_removing_it_passes(page_copy):
    docs, copy = page_copy
    glossary.check(docs)  # the page as it is
    lines = copy.read_text(encoding="utf-8").splitlines(keepends=True)
    at = len(lines) // 2
    copy.write_text("".join([*lines[:at], PLANTED + "\n", *lines[at:]]), "utf-8")
    with pytest.raises(glossary.GlossaryError) as e:
        glossary.check(docs)
    assert (
        f"{copy.as_posix()}:{at + 1}: 锁页内存 is a spelling the glossary "
        f"avoids; write 页锁定内存 (page-locked (pinned) memory)" in str(e.value)
    )
    copy.write_text("".join(lines), "utf-8")
    glossary.check(docs)


def test_the_chinese_build_fails_on_a_variant(page_copy):
    """hooks.on_pre_build runs check_terms in every build, serve's too."""
    docs, copy = page_copy
    zh = SimpleNamespace(theme={"language": "zh"}, docs_dir=str(docs))
    hooks.check_terms(zh)
    copy.write_text(copy.read_text(encoding="utf-8") + "\n" + PLANTED + "\n", "utf-8")
    with pytest.raises(PluginError, match="锁页内存 is a spelling the glossary"):
        hooks.check_terms(zh)
    # the English build does not read Chinese pages
    hooks.check_terms(SimpleNamespace(theme={"language": "en"}, docs_dir=str(docs)))


def test_code_a_page_includes_is_checked_too(tmp_path):
    """A Chinese comment in included code is read as Chinese: it counts."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src/x.py").write_text(
        "a = 1  # 锁页内存 outside the section\n"
        "# --8<-- [start:shown]\n"
        "b = 2\n"
        "c = 3  # 这里用了合并访存\n"
        "# --8<-- [end:shown]\n",
        encoding="utf-8",
    )
    docs = tmp_path / "zh"
    docs.mkdir()
    (docs / "p.md").write_text(
        '正文。\n\n```python\n--8<-- "src/x.py:shown"\n```\n'
        '\n```python\n;--8<-- "src/x.py"\n```\n',
        encoding="utf-8",
    )
    found = [
        d for d in glossary.deviations(docs, root=tmp_path) if d.path.endswith("x.py")
    ]
    assert [(d.line, d.variant, d.term) for d in found] == [(4, "合并访存", "合并访问")]
    assert found[0].included_by.endswith("p.md:4")


# Spellings a review found on the pages (issue 15), each for a term the glossary
# spells otherwise: they stay on the avoid lists, so the test above keeps rejecting
# them. 通道 itself is right for channels and PCIe lanes; only its uses for a
# warp's lanes are listed.
FOUND_IN_REVIEW = {
    "lane (of a warp)": ["各条通道", "各通道", "号通道", "32 条通道", "FP32 通道"],
    "warp divergence": ["线程束分歧"],
    "barrier": ["栅栏"],
    "reduction": ["规约"],
    "memory hierarchy": ["内存层次"],
    "credit assignment": ["功劳分配"],
    "patch matrix (im2col)": ["补丁矩阵"],
}


@pytest.mark.parametrize("term", FOUND_IN_REVIEW)
def test_the_variants_a_review_found_stay_rejected(term):
    (entry,) = [e for e in ENTRIES if e["en"] == term]
    missing = set(FOUND_IN_REVIEW[term]) - set(entry.get("avoid", []))
    assert not missing, f"{term} ({entry['zh']}): avoid no longer lists {missing}"


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
