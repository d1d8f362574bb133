"""The glossary page: docs/glossary.yml rendered where a page says <!-- glossary -->.

One Chinese spelling per term, and the spellings to avoid; the Chinese posts are held
to it by tests/cpu/test_glossary.py.
"""

from __future__ import annotations

import re
from functools import cache

import yaml

from thousand.bench.ledger import ROOT

GLOSSARY_FILE = ROOT / "docs" / "glossary.yml"
DIRECTIVE = re.compile(r"^<!-- glossary -->$", re.M)

TEXT = {
    "zh": {
        "sections": {"gpu": "GPU 与 CUDA", "networks": "神经网络", "project": "本站"},
        "head": "| 中文 | English | 不用的写法 |\n|---|---|---|",
    },
    "en": {
        "sections": {
            "gpu": "GPUs and CUDA",
            "networks": "Neural networks",
            "project": "This site",
        },
        "head": "| English | Chinese | not used |\n|---|---|---|",
    },
}


@cache
def entries() -> dict[str, list[dict]]:
    return yaml.safe_load(GLOSSARY_FILE.read_text(encoding="utf-8"))


def _row(entry: dict, lang: str) -> str:
    note = entry.get("note", {}).get(lang)
    zh = entry["zh"] + (f"（{note}）" if note and lang == "zh" else "")
    en = entry["en"] + (f" ({note})" if note and lang == "en" else "")
    avoid = "、".join(entry.get("avoid", [])) or "–"
    cells = [zh, en] if lang == "zh" else [en, zh]
    return "| " + " | ".join([*cells, avoid]) + " |"


def render(lang: str) -> str:
    t = TEXT[lang]
    parts = []
    for section, items in entries().items():
        rows = "\n".join(_row(e, lang) for e in items)
        parts.append(f"## {t['sections'][section]}\n\n{t['head']}\n{rows}\n")
    return "\n".join(parts)


def render_page(markdown: str, lang: str) -> str:
    if not DIRECTIVE.search(markdown):
        return markdown
    return DIRECTIVE.sub(lambda m: render(lang), markdown)
