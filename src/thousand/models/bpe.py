"""A15/A16's tokenizer: byte-level BPE as GPT-2 uses it (Radford et al. 2019,
sec. 2.2), trained on the corpus's training split (thousand.models.corpus).

Text becomes UTF-8 bytes, each byte a printable stand-in character, so every string
has a spelling and nothing is ever unknown. A regex first cuts the text into words
(letters, digits, punctuation, spaces apart, a leading space kept with the word),
and merges never cross a word. Training starts from the 256 bytes and repeatedly
merges the most frequent adjacent pair into one new symbol until the vocabulary
has vocab_size entries; encoding replays the merges in the order they were learned.

The trainer makes the same merges, in the same order, as Hugging Face tokenizers'
BpeTrainer with a ByteLevel pre-tokenizer (tests/cpu/test_bpe.py checks it), so its
choices are HF's: ids are the specials, then the 256 byte characters in code-point
order, then one per new symbol; among pairs of equal count the one with the smaller
ids wins; a pair is counted at every position it starts, so "aaa" counts ("a", "a")
twice though only one merge fits in it. One choice is left open in both: when two
pairs spell the same symbol, one pair can hold two heap entries of equal count, and
which comes out first is up to the heap (HF's binary heap; here first in, first
out). It never arises on this corpus: 3,838 merges made 3,838 new symbols.

    python -m thousand.models.bpe train [--force]   writes snapshot/bpe.txt
    python -m thousand.models.bpe stats             tokens per character, per language
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from functools import cache
from importlib import resources
from pathlib import Path

import regex

from thousand.models import corpus

SPECIALS = ("<|endoftext|>", "<|classify|>")  # ids 0 and 1
VOCAB_SIZE = 4096
MERGES_FILE = "snapshot/bpe.txt"  # inside this package


# --8<-- [start:bytes]
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's stand-in character for each byte: the printable Latin-1 bytes stand
    for themselves, the other 68 (controls, space, soft hyphen) take the characters
    from 256 on, in byte order. Every token is then a visible string."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    others = (b for b in range(256) if b not in printable)
    shifted = {b: chr(256 + n) for n, b in enumerate(others)}
    return {b: chr(b) if b in printable else shifted[b] for b in range(256)}


# GPT-2's pre-tokenizer: English contractions, then runs of letters, of digits, of
# other symbols (each may take one leading space), then whitespace; the (?!\S) keeps
# the last space of a run for the word that follows it.
PATTERN = regex.compile(
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
)
# --8<-- [end:bytes]

BYTE_CHAR = bytes_to_unicode()
CHAR_BYTE = {c: b for b, c in BYTE_CHAR.items()}
ALPHABET = sorted(BYTE_CHAR.values())  # code-point order, as HF numbers its alphabet


def words(text: str) -> list[str]:
    """The pre-tokenizer's words, each spelt in byte characters."""
    return [
        "".join(BYTE_CHAR[b] for b in w.encode("utf-8")) for w in PATTERN.findall(text)
    ]


def _merge_word(word: list[int], a: int, b: int, new: int) -> list:
    """Replace each (a, b) in word, left to right, by new; return how the counts of
    the neighbouring pairs change: (pair, -1) for each lost, (pair, +1) for each
    formed. The merged pair itself is not listed: it is not counted again."""
    changes = []
    i = 0
    while i < len(word) - 1:
        if word[i] == a and word[i + 1] == b:
            if i > 0:
                changes += [((word[i - 1], a), -1), ((word[i - 1], new), 1)]
            word[i : i + 2] = [new]
            if i < len(word) - 1:
                changes += [((b, word[i + 1]), -1), ((new, word[i + 1]), 1)]
        i += 1
    return changes


def train(
    texts: Iterable[str], vocab_size: int, specials: Iterable[str] = SPECIALS
) -> list[tuple[str, str]]:
    """Learn merges until the vocabulary (specials, 256 bytes, merged symbols) has
    vocab_size entries or no pair is left; returns the merges in the order made."""
    symbols = list(dict.fromkeys(specials)) + ALPHABET  # id -> symbol
    if vocab_size < len(symbols):
        raise ValueError(
            f"vocab_size {vocab_size} is below the {len(symbols)} specials and bytes"
        )
    ids = {s: i for i, s in enumerate(symbols)}
    counted = Counter(w for t in texts for w in words(t))
    spelt = [[ids[c] for c in w] for w in counted]  # each distinct word, in ids
    weight = list(counted.values())  # how often it occurs

    # --8<-- [start:train]
    count = defaultdict(int)  # pair -> occurrences, weighted by word counts
    where = defaultdict(set)  # pair -> the words it occurs in
    for w, word in enumerate(spelt):
        for pair in itertools.pairwise(word):
            count[pair] += weight[w]
            where[pair].add(w)
    # A max-heap on (count, then the smaller pair of ids). Entries go stale as counts
    # change; a stale one is pushed back with its current count when it surfaces.
    order = itertools.count()  # equal entries come out first in, first out
    heap = [(-count[p], p, next(order), ws) for p, ws in where.items()]
    heapq.heapify(heap)
    merges = []
    while len(ids) < vocab_size and heap:
        n, pair, _, ws = heapq.heappop(heap)
        if -n != count[pair]:
            heapq.heappush(heap, (-count[pair], pair, next(order), ws))
            continue
        if -n < 1:
            break
        symbol = symbols[pair[0]] + symbols[pair[1]]
        if symbol not in ids:  # two different pairs can spell the same symbol
            ids[symbol] = len(symbols)
            symbols.append(symbol)
        merges.append(pair)
        formed = defaultdict(set)  # new pairs and the words they formed in
        for w in ws:
            for p, change in _merge_word(spelt[w], *pair, ids[symbol]):
                count[p] += change * weight[w]
                if change > 0:
                    formed[p].add(w)
        for p, ws_p in formed.items():
            if count[p] > 0:
                heapq.heappush(heap, (-count[p], p, next(order), ws_p))
    # --8<-- [end:train]
    return _ranked([(symbols[a], symbols[b]) for a, b in merges])


def _ranked(merges: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """A pair merged twice keeps its last place (HF keeps merges in a map)."""
    last = {m: r for r, m in enumerate(merges)}
    return [m for r, m in enumerate(merges) if last[m] == r]


class Tokenizer:
    """Byte-level BPE from a list of merges. Ids: the specials, the 256 bytes in
    code-point order of their characters, then each merged symbol once."""

    def __init__(self, merges: list[tuple[str, str]], specials=SPECIALS):
        self.specials = tuple(dict.fromkeys(specials))
        self.tokens = [*self.specials, *ALPHABET]  # id -> token string
        self._ids = {t: i for i, t in enumerate(self.tokens)}
        for a, b in merges:
            if a + b not in self._ids:  # a symbol two pairs spell has one id
                self._ids[a + b] = len(self.tokens)
                self.tokens.append(a + b)
        self.rank = {m: r for r, m in enumerate(merges)}
        self.merges = list(merges)
        split = "|".join(regex.escape(s) for s in self.specials)
        self._special = regex.compile(f"({split})")
        self._cache: dict[str, list[int]] = {}

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    def id_of(self, token: str) -> int:
        """The id of a token (a special, or a string of byte characters)."""
        try:
            return self._ids[token]
        except KeyError:
            raise KeyError(f"{token!r} is not in the vocabulary") from None

    # --8<-- [start:encode-word]
    def encode_word(self, word: str) -> list[int]:
        """One pre-tokenized word: merge the adjacent pair learned earliest, the
        leftmost if it occurs twice, until no learned pair is left."""
        parts = list(word)
        unknown = len(self.rank)  # ranks run from 0 to unknown - 1
        while len(parts) > 1:
            ranks = [self.rank.get(pair, unknown) for pair in itertools.pairwise(parts)]
            best = min(ranks)
            if best == unknown:
                break
            i = ranks.index(best)  # the leftmost, as the learned merges were made
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        return [self._ids[p] for p in parts]

    # --8<-- [end:encode-word]

    def encode(self, text: str) -> list[int]:
        """Token ids of text; each special string becomes its own id, whole."""
        if not isinstance(text, str):
            raise TypeError(f"encode takes a str, not {type(text).__name__}")
        out: list[int] = []
        for k, piece in enumerate(self._special.split(text)):
            if k % 2:  # the split's captured separators: the specials
                out.append(self._ids[piece])
                continue
            for w in words(piece):
                if w not in self._cache:
                    self._cache[w] = self.encode_word(w)
                out += self._cache[w]
        return out

    def decode(self, ids: Iterable[int]) -> str:
        """The text of token ids (bytes that do not form UTF-8 show as U+FFFD)."""
        out, pending = [], bytearray()
        for i in ids:
            if not 0 <= i < len(self.tokens):
                raise ValueError(
                    f"id {i} is outside the vocabulary (0..{len(self.tokens) - 1})"
                )
            token = self.tokens[i]
            if token in self.specials:
                out.append(pending.decode("utf-8", "replace") + token)
                pending = bytearray()
            else:
                pending += bytes(CHAR_BYTE[c] for c in token)
        return "".join(out) + pending.decode("utf-8", "replace")

    def dumps(self, header: str) -> str:
        """merges.txt as GPT-2 writes it: one header line, then "a b" a line."""
        return "\n".join([header, *(f"{a} {b}" for a, b in self.merges), ""])

    @classmethod
    def loads(cls, text: str) -> Tokenizer:
        lines = text.splitlines()[1:]  # the first line is the header
        return cls([tuple(line.split(" ")) for line in lines if line])

    @classmethod
    @cache
    def load(cls) -> Tokenizer:
        """The shipped tokenizer (snapshot/bpe.txt), read once."""
        path = resources.files(__package__).joinpath(MERGES_FILE)
        return cls.loads(path.read_text(encoding="utf-8"))


def header(vocab_size: int) -> str:
    return (
        f"#version: thousand.models.bpe, corpus {corpus.load()['commit']}, "
        f"vocab_size {vocab_size}"
    )


def merges_path() -> Path:
    """Where train writes: the package's own file in this checkout."""
    return Path(__file__).resolve().parent / MERGES_FILE


def train_file(out: Path | None = None, force: bool = False) -> tuple[Tokenizer, float]:
    """Train on the training split and write the merges; refuse to replace a file
    without force (the models trained on a GPU use its ids). Returns the tokenizer
    and the training time in seconds."""
    out = out or merges_path()
    if out.exists() and not force:
        raise FileExistsError(
            f"{out} exists and trained models depend on it; pass --force to replace it"
        )
    start = time.perf_counter()
    tok = Tokenizer(train(corpus.paragraphs("train"), VOCAB_SIZE))
    seconds = time.perf_counter() - start
    out.write_text(tok.dumps(header(tok.vocab_size)), encoding="utf-8")
    return tok, seconds


def tokens_per_char(split: str = "val", tok: Tokenizer | None = None) -> dict:
    """Per language: characters, UTF-8 bytes, tokens, tokens and bytes per
    character of the split's paragraphs (each encoded on its own)."""
    tok = tok or Tokenizer.load()
    out = {}
    for lang in ("zh", "en"):
        texts = corpus.paragraphs(split, lang)
        chars = sum(map(len, texts))
        nbytes = sum(len(t.encode("utf-8")) for t in texts)
        tokens = sum(len(tok.encode(t)) for t in texts)
        out[lang] = {
            "characters": chars,
            "bytes": nbytes,
            "tokens": tokens,
            "tokens_per_char": tokens / chars,
            "bytes_per_char": nbytes / chars,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m thousand.models.bpe", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    train_p = sub.add_parser("train", help="write snapshot/bpe.txt from the corpus")
    train_p.add_argument("--force", action="store_true", help="replace the file")
    sub.add_parser("stats", help="tokens per character of the validation split")
    args = parser.parse_args(argv)
    if args.command == "train":
        try:
            tok, seconds = train_file(force=args.force)
        except FileExistsError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        print(
            f"wrote {merges_path()}: {len(tok.merges)} merges, vocab_size "
            f"{tok.vocab_size}, trained in {seconds:.1f} s"
        )
        return 0
    if not merges_path().exists():
        print(f"error: no {merges_path()}; run train first", file=sys.stderr)
        return 1
    print("validation split    chars     bytes    tokens  tokens/char  bytes/char")
    for lang, s in tokens_per_char("val").items():
        print(
            f"{lang:<16} {s['characters']:>8} {s['bytes']:>9} {s['tokens']:>9} "
            f"{s['tokens_per_char']:>12.3f} {s['bytes_per_char']:>11.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
