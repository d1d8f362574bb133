"""A15/A16's byte-level BPE against Hugging Face tokenizers, trained the same way
(ByteLevel pre-tokenizer without a prefix space, BpeTrainer with the two specials
and the 256 byte characters as its initial alphabet): the same merges in the same
order, the same vocabulary ids and the same encodings. Then the tokenizer's own
promises: every paragraph round-trips, specials stay whole, bad input is refused.
"""

import json
import re
import time

import pytest

from thousand.models import bpe, corpus

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import models, pre_tokenizers, trainers  # noqa: E402


def hf_train(texts, vocab_size):
    """HF's tokenizer trained on texts, its merges as pairs, and the seconds taken."""
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(bpe.SPECIALS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        min_frequency=0,
        show_progress=False,
    )
    start = time.perf_counter()
    tok.train_from_iterator(texts, trainer)
    seconds = time.perf_counter() - start
    merges = json.loads(tok.to_str())["model"]["merges"]
    # older versions write "a b", newer ones ["a", "b"]
    pairs = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in merges]
    return tok, pairs, seconds


@pytest.fixture(scope="module")
def hf_full():
    return hf_train(corpus.paragraphs("train"), bpe.VOCAB_SIZE)


@pytest.fixture(scope="module")
def shipped():
    return bpe.Tokenizer.load()


def test_byte_characters_are_gpt2s():
    chars = bpe.bytes_to_unicode()
    assert len(set(chars.values())) == 256
    assert set(chars.values()) == set(pre_tokenizers.ByteLevel.alphabet())
    assert chars[ord("a")] == "a" and chars[ord(" ")] == "Ġ" and chars[10] == "Ċ"


def test_pre_tokenizer_splits_like_hfs():
    hf = pre_tokenizers.ByteLevel(add_prefix_space=False)
    for text in corpus.paragraphs("train") + corpus.paragraphs("val"):
        assert bpe.words(text) == [w for w, _ in hf.pre_tokenize_str(text)]


def test_shipped_merges_are_hfs(hf_full, shipped):
    _, merges, _ = hf_full
    assert shipped.merges == merges
    assert shipped.vocab_size == bpe.VOCAB_SIZE
    # every merge made a new symbol (no two pairs spell one: see bpe's docstring)
    assert len(merges) == bpe.VOCAB_SIZE - len(bpe.SPECIALS) - 256
    header = bpe.merges_path().read_text(encoding="utf-8").splitlines()[0]
    assert corpus.load()["commit"] in header and header.endswith("vocab_size 4096")


def test_shipped_ids_are_hfs(hf_full, shipped):
    # the same ids, not only the same strings: specials, bytes by code point, merges
    tok, _, _ = hf_full
    assert {t: i for i, t in enumerate(shipped.tokens)} == tok.get_vocab()
    assert [shipped.id_of(s) for s in bpe.SPECIALS] == [0, 1]


def test_our_trainer_makes_hfs_merges_on_a_subset():
    texts = (
        corpus.paragraphs("train", "zh")[:300] + corpus.paragraphs("train", "en")[:300]
    )
    _, merges, _ = hf_train(texts, 600)
    assert len(merges) == 600 - 258
    assert bpe.train(texts, 600) == merges


def test_our_trainer_reproduces_the_shipped_file(shipped):
    # about a second on one core: the incremental counts make the full run cheap
    start = time.perf_counter()
    merges = bpe.train(corpus.paragraphs("train"), bpe.VOCAB_SIZE)
    assert time.perf_counter() - start < 30
    assert merges == shipped.merges


def test_overlapping_pairs_are_counted_as_hf_counts_them():
    # "aaa" counts ("a", "a") twice; ties go to the smaller ids; runs of one symbol
    texts = ["aaa aaa aaaa bbbb ab ab", "----|----|---", "0000 000 00"] * 3
    for vocab_size in range(259, 285):
        assert bpe.train(texts, vocab_size) == hf_train(texts, vocab_size)[1]


def test_encode_is_hfs_on_the_validation_split(hf_full, shipped):
    tok, _, _ = hf_full
    for text in corpus.paragraphs("val"):
        theirs = [shipped.id_of(t) for t in tok.encode(text).tokens]
        assert shipped.encode(text) == theirs


def test_every_paragraph_round_trips(shipped):
    for text in corpus.paragraphs("train") + corpus.paragraphs("val"):
        assert shipped.decode(shipped.encode(text)) == text


def test_specials_are_their_ids_and_never_merged(hf_full, shipped):
    eot, cls = bpe.SPECIALS
    assert shipped.encode(eot) == [0] and shipped.encode(cls) == [1]
    assert shipped.encode(eot + eot + cls) == [0, 0, 1]
    text = f"GPT-1 reads{cls} the label{eot}下一段"
    ids = shipped.encode(text)
    assert ids.count(1) == 1 and ids.count(0) == 1
    assert ids == [shipped.id_of(t) for t in hf_full[0].encode(text).tokens]
    assert shipped.decode(ids) == text
    # a near miss is plain text, and no learned symbol holds a special
    assert not {0, 1} & set(shipped.encode("<|endoftext|"))
    assert not any(s in a + b for a, b in shipped.merges for s in bpe.SPECIALS)


def test_bad_input_is_refused(shipped):
    with pytest.raises(ValueError, match="vocab_size 257"):
        bpe.train(["some text"], 257)  # 2 specials + 256 bytes need 258
    with pytest.raises(TypeError, match="bytes"):
        shipped.encode(b"bytes")
    with pytest.raises(TypeError, match="NoneType"):
        shipped.encode(None)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        shipped.decode([4096])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        shipped.decode([-1])
    with pytest.raises(KeyError, match="not in the vocabulary"):
        shipped.id_of("no such token")


def test_train_refuses_to_replace_the_merges(tmp_path, monkeypatch, capsys):
    out = tmp_path / "bpe.txt"
    out.write_text("models trained on a GPU use my ids")
    monkeypatch.setattr(bpe, "merges_path", lambda: out)
    assert bpe.main(["train"]) == 1
    assert "--force" in capsys.readouterr().err
    assert out.read_text() == "models trained on a GPU use my ids"


def test_tokens_per_char_shows_what_chinese_pays(shipped):
    stats = bpe.tokens_per_char("val", shipped)
    assert set(stats) == {"zh", "en"}
    for s in stats.values():
        assert s["tokens_per_char"] == s["tokens"] / s["characters"]
        assert s["bytes_per_char"] == s["bytes"] / s["characters"]
    assert stats["en"]["bytes_per_char"] < 1.01 < 1.5 < stats["zh"]["bytes_per_char"]
    assert stats["zh"]["tokens_per_char"] > stats["en"]["tokens_per_char"]


def test_stats_prints_a_row_per_language(capsys):
    assert bpe.main(["stats"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert [r.split()[0] for r in rows[1:]] == ["zh", "en"]
    assert all(re.fullmatch(r"\w+( +[\d.]+){5}", r) for r in rows[1:])
