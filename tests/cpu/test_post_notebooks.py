"""Every post as a notebook (thousand.site.notebooks): made from the files the post
includes, the same code in both languages, and run top to bottom on the CPU backend
as a reader without a GPU would run it.

Each post's notebook is executed once, in English: the Chinese one must hold the
same code cells (its set-up cell differs in its comments only), so running it too
would run the same programs again. The kernels it launches come from the CPU
backend's compile cache on disk, which the snippet tests
(tests/cpu/test_emulated_snippets.py) fill as well, whichever runs first.
"""

import io
import re
import tokenize
from pathlib import Path

import pytest

from tests.cpu.test_emulated_snippets import GPU_ONLY, NEEDS_CUOBJDUMP
from tests.helpers import require_module, require_tool
from thousand.bench.ledger import ROOT
from thousand.site import notebooks as N

POSTS = sorted((ROOT / "docs" / "en" / "blog" / "posts").glob("*.md"))
MARKER = re.compile(r"^.*--8<-- \[(?:start|end):[\w-]+\].*\n", re.M)
WHOLE = re.compile(r'^```python\n--8<-- "(snippets/\w+\.py)"\n```$', re.M)


def _notebook(path: Path, lang: str = "en", repo_url: str | None = None) -> dict:
    return N.notebook(
        path.read_text(encoding="utf-8"),
        lang,
        ROOT,
        "https://example.org/post/",
        repo_url,
    )


def _twin(path: Path) -> Path:
    return ROOT / "docs" / "zh" / "blog" / "posts" / path.name


def _code(nb: dict) -> list[str]:
    return [c["source"] for c in nb["cells"] if c["cell_type"] == "code"]


def _without_comments(source: str) -> str:
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return " ".join(
        t.string for t in tokens if t.type not in (tokenize.COMMENT, tokenize.NL)
    )


def test_every_post_in_both_languages_has_one():
    assert POSTS
    for path in POSTS:
        assert _twin(path).exists(), f"{path.name} has no Chinese twin"


@pytest.mark.parametrize("path", POSTS, ids=lambda p: p.stem)
def test_the_notebook_is_the_posts_snippets_in_order(path: Path):
    nbformat = require_module("nbformat")
    for lang, source in (("en", path), ("zh", _twin(path))):
        nb = _notebook(source, lang)
        nbformat.validate(nbformat.reads(N.dumps(nb), as_version=4))
        shown = WHOLE.findall(source.read_text(encoding="utf-8"))
        cells = _code(nb)[1:]  # after the set-up cell
        assert len(cells) == len(shown), (lang, shown)
        for cell, snippet in zip(cells, shown, strict=True):
            text = (ROOT / snippet).read_text(encoding="utf-8")
            text = MARKER.sub("", text).rstrip("\n")  # as the page shows it
            assert cell.endswith(text), f"{lang}: the cell for {snippet} is not it"
            extra = cell[: -len(text)].splitlines()
            gpu_only = Path(snippet).stem in GPU_ONLY.keys() | NEEDS_CUOBJDUMP
            assert ("%%skip_if_unsupported" in extra) == gpu_only, (snippet, extra)
        text = "".join(c["source"] for c in nb["cells"])
        # every include expanded, every ledger directive turned into a line
        assert "--8<--" not in text and "<!-- results:" not in text
        assert "<!-- access:" not in text and "<!-- more -->" not in text


@pytest.mark.parametrize("path", POSTS, ids=lambda p: p.stem)
def test_both_languages_share_the_code(path: Path):
    en, zh = _code(_notebook(path, "en")), _code(_notebook(_twin(path), "zh"))
    assert en[1:] == zh[1:]
    # the set-up cells differ in comments and in the message of one error only
    strip = re.compile(r"RuntimeError \( .*? \)")
    assert strip.sub("", _without_comments(en[0])) == strip.sub(
        "", _without_comments(zh[0])
    )


def test_an_include_shows_what_the_page_shows():
    """A kernel's section is expanded by pymdownx.snippets itself: its markers gone,
    its code there, in a code block to read (not a cell to run)."""
    nb = _notebook(ROOT / "docs/en/blog/posts/parallel-reduction.md")
    prose = "".join(c["source"] for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "__global__ void reduce_v1(" in prose
    assert "[start:reduce-v1]" not in prose
    assert not any("__global__" in c for c in _code(nb))


def test_the_colab_link_comes_from_a_github_repository_only():
    url = N.colab_url("https://github.com/someone/thousand-points", "zh", "gan")
    assert url == (
        "https://colab.research.google.com/github/someone/thousand-points/blob/"
        f"{N.BRANCH}/zh/gan.ipynb"
    )
    assert N.colab_url(None, "en", "gan") is None
    assert (
        N.colab_url("https://gitlab.com/someone/thousand-points", "en", "gan") is None
    )
    line = N.links_html("gan", None, "en")
    assert "colab.research" not in line and "REPO_URL" in line
    assert 'download="gan.ipynb"' in line
    line = N.links_html("gan", "https://gitlab.com/a/b", "zh")
    assert "colab.research" not in line and "GitHub" in line
    line = N.links_html("gan", "https://github.com/a/b", "zh")
    assert url.replace("someone/thousand-points", "a/b") in line
    assert "tp-nb-why" not in line


def test_the_set_up_cell_names_the_repository_or_says_it_cannot():
    post = ROOT / "docs/en/blog/posts/mp-neuron.md"
    with_repo = _code(_notebook(post, repo_url="https://github.com/a/b"))[0]
    assert "REPOSITORY = 'https://github.com/a/b'" in with_repo
    assert '".[gpu,snippets]"' not in with_repo  # chosen by nvidia-smi, not -e
    without = _code(_notebook(post))[0]
    assert "REPOSITORY = None" in without and "root of a clone" in without


def test_a_post_that_is_not_a_known_language_is_refused():
    with pytest.raises(N.NotebookError, match="lang: got 'fr'"):
        N.notebook("# x\n", "fr", ROOT, "https://example.org/", None)


@pytest.mark.parametrize("path", POSTS, ids=lambda p: p.stem)
def test_runs_on_the_cpu_backend(path: Path, tmp_path, monkeypatch):
    """Top to bottom in a fresh kernel, on the CPU backend: no cell may fail. A
    snippet the CPU backend cannot run (GPU only, or cuobjdump missing) must have
    been refused with its own reason, printed by its cell."""
    require_tool("g++")
    nbformat = require_module("nbformat")
    from tests.helpers import execute_notebook

    monkeypatch.setenv("THOUSAND_BACKEND", "cpu")  # the kernel inherits it
    file = tmp_path / f"{path.stem}.ipynb"
    file.write_text(N.dumps(_notebook(path)), encoding="utf-8")
    nbformat.validate(nbformat.read(file, as_version=4))
    nb = execute_notebook(file, timeout=600)
    cells = [c for c in nb.cells if c.cell_type == "code"]
    printed = ["".join(o.get("text", "") for o in c.outputs) for c in cells]
    assert printed[0].startswith("CPU backend"), printed[0]
    shown = WHOLE.findall(path.read_text(encoding="utf-8"))
    for snippet, out in zip(shown, printed[1:], strict=True):
        stem = Path(snippet).stem
        # a refused snippet may print a line or two before its launcher refuses
        last = out.rstrip("\n").rsplit("\n", 1)[-1]
        if stem in GPU_ONLY:
            assert last.startswith("skipped on this machine"), out
            assert GPU_ONLY[stem] in last, out
        elif stem in NEEDS_CUOBJDUMP and last.startswith("skipped on this machine"):
            assert re.search(r"(cuobjdump|nvdisasm) is not installed", last), out
        else:
            assert "skipped on this machine" not in out, out
            assert out.strip(), f"{snippet} printed nothing"
