"""Category slugs shared by both languages, so a category page has the same path in
the Chinese and the English build (and the language switch finds it)."""

from pymdownx.slugs import slugify

CATEGORIES = {
    "GPU 编程": "gpu-programming",
    "GPU programming": "gpu-programming",
    "神经网络": "neural-networks",
    "Neural networks": "neural-networks",
}

_fallback = slugify(case="lower")


def category(text: str, separator: str) -> str:
    return CATEGORIES.get(text) or _fallback(text, separator)
