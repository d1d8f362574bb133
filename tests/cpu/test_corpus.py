"""A15/A16's corpus: the frozen snapshot of the posts' paragraphs (both languages,
both tracks, no code, includes or comments), its fixed train/validation split, and
a freeze that never replaces the snapshot unasked."""

import json
import re

import pytest

from thousand.models import corpus


def test_snapshot_loads_with_its_provenance():
    snap = corpus.load()
    assert re.fullmatch(r"[0-9a-f]{40}", snap["commit"])
    assert snap["made_by"] == "python -m thousand.models.corpus freeze"
    assert snap["paragraphs"]
    for p in snap["paragraphs"]:
        assert set(p) == {"post", "lang", "track", "text"}
        assert p["lang"] in ("zh", "en") and p["track"] in ("A", "B")


def test_both_languages_and_both_tracks():
    seen = {(p["lang"], p["track"]) for p in corpus.load()["paragraphs"]}
    assert seen == {("zh", "A"), ("zh", "B"), ("en", "A"), ("en", "B")}


def test_order_is_zh_then_en_each_by_file_name():
    rows = corpus.load()["paragraphs"]
    keys = [(p["lang"] == "en", p["post"]) for p in rows]
    assert keys == sorted(keys)


def test_the_file_is_what_dumps_writes():
    # one paragraph a line, and the same JSON when read back
    text = corpus.snapshot_path().read_text(encoding="utf-8")
    assert text == corpus.dumps(corpus.load())
    assert json.loads(text) == corpus.load()
    assert len(text.splitlines()) == len(corpus.load()["paragraphs"]) + 2


def test_splits_are_disjoint_cover_everything_and_follow_the_rule():
    n = len(corpus.load()["paragraphs"])
    train, val = corpus.split("train"), corpus.split("val")
    assert not set(train) & set(val)
    assert sorted(train + val) == list(range(n))
    assert val == list(range(0, n, 10))
    for lang in ("zh", "en"):
        assert corpus.paragraphs("val", lang) and corpus.paragraphs("train", lang)
    assert len(corpus.paragraphs("val")) == len(val)


def test_text_joins_paragraphs_with_end_of_text():
    val = corpus.paragraphs("val")
    assert corpus.text("val") == "<|endoftext|>".join(val)
    assert corpus.text("val").count(corpus.EOT) == len(val) - 1


def test_no_code_includes_comments_or_scraps():
    for p in corpus.load()["paragraphs"]:
        text = p["text"]
        assert "--8<--" not in text and "<!--" not in text and "```" not in text
        assert len(text) >= corpus.MIN_CHARS
        assert not text.startswith("#")  # headings lose their #'s


def test_bad_split_or_language():
    with pytest.raises(ValueError, match="split"):
        corpus.split("test")
    with pytest.raises(ValueError, match="lang"):
        corpus.paragraphs("train", "fr")


POST = """---
date: 2026-01-01
point: A7
tags: [a,
  b]
---

# A title long enough to be kept

Prose that a reader sees, with `code`, a formula $x^2$ and a [link](x.md).
Its second line.

<!-- results:table relu -->

```python
print("this code goes")

print("and so does this, after a blank line")
```
Text right after a fence is a paragraph of its own.

--8<-- "src/thousand/kernels/relu.cu:relu"

![a picture](picture.png)

!!! note "An admonition's title stays"
    Its body stays too, without the indent.

| a table | stays |
|---|---|
| 1 | 2 |

## Short

<!-- more -->
"""


def test_paragraphs_of_a_post():
    assert corpus.track_of(corpus.split_front_matter(POST)[0]) == "A"
    assert corpus.paragraphs_of(POST) == [
        "A title long enough to be kept",
        "Prose that a reader sees, with `code`, a formula $x^2$ and a [link](x.md).\n"
        "Its second line.",
        "Text right after a fence is a paragraph of its own.",
        "An admonition's title stays\nIts body stays too, without the indent.",
        "| a table | stays |\n|---|---|\n| 1 | 2 |",
    ]


def test_read_posts_skips_a_post_without_a_point(tmp_path):
    for lang in ("zh", "en"):
        (tmp_path / lang).mkdir()
        (tmp_path / lang / "b.md").write_text(POST.replace("A7", "B3"))
        (tmp_path / lang / "a.md").write_text(POST)
        (tmp_path / lang / "c.md").write_text(POST.replace("point: A7\n", ""))
    rows = corpus.read_posts({lang: tmp_path / lang for lang in ("zh", "en")})
    assert [(r["lang"], r["post"], r["track"]) for r in rows[::5]] == [
        ("zh", "a", "A"),
        ("zh", "b", "B"),
        ("en", "a", "A"),
        ("en", "b", "B"),
    ]


def test_freeze_refuses_to_replace_the_snapshot(tmp_path, monkeypatch, capsys):
    out = tmp_path / "posts.json"
    out.write_text("recorded figures depend on me")
    monkeypatch.setattr(corpus, "snapshot_path", lambda: out)
    assert corpus.main(["freeze"]) == 1
    assert "--force" in capsys.readouterr().err
    assert out.read_text() == "recorded figures depend on me"
    with pytest.raises(FileExistsError):
        corpus.freeze(out)


def test_freeze_with_force_writes_the_snapshot(tmp_path, monkeypatch, capsys):
    # git is stubbed: the posts read are clean, at a made-up commit
    answers = {"status": "", "rev-parse": "f" * 40}
    monkeypatch.setattr(corpus, "_git", lambda *args: answers[args[0]])
    out = tmp_path / "posts.json"
    out.write_text("old")
    monkeypatch.setattr(corpus, "snapshot_path", lambda: out)
    assert corpus.main(["freeze", "--force"]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"zh: \d+ paragraphs, \d+ characters", printed)
    snap = json.loads(out.read_text(encoding="utf-8"))
    assert snap["commit"] == "f" * 40 and snap["paragraphs"]


def test_freeze_refuses_uncommitted_posts(tmp_path, monkeypatch):
    monkeypatch.setattr(corpus, "_git", lambda *args: " M docs/en/blog/posts/x.md")
    with pytest.raises(RuntimeError, match="commit them first"):
        corpus.freeze(tmp_path / "posts.json")
    assert not (tmp_path / "posts.json").exists()
