"""Every post as a Jupyter notebook, made while the site is built from the files the
post itself includes, so the two cannot drift apart.

The post's Markdown is cut where it shows a snippet file whole (a ```python block
holding only `--8<-- "snippets/<name>.py"`): each such file becomes a code cell, in
the post's order, and the prose between them Markdown cells. Every other include
(a kernel's section, a launcher's, the install commands) is expanded by
pymdownx.snippets itself, as on the page, and stays a code block to read. What the
page draws from the GPU run's ledger (`<!-- results:... -->`) and the access
pictures become one line that links to the post: a notebook the reader runs prints
its own output.

The first code cell sets the notebook up wherever it opens: at the root of a clone
it uses what is installed there (CI runs it so, on the CPU backend); elsewhere
(Colab) it clones the repository the site knows and installs it with the GPU's
extras, the install command every page shows but not editable, so that the running
kernel can import it without a restart. It then says which GPU the kernels run on.
A snippet that needs hardware or tools a machine may lack (its docstring says "GPU
only", or names cuobjdump) runs under `%%skip_if_unsupported`: its launcher refuses
there, as it always does, with the reason, and the cell prints that reason and lets
the notebook go on; any other error still stops it.

Colab opens a notebook only from GitHub (and Drive, and gists), never from a site:
`colab_url` points at the branch `notebooks` of the repository, where the deploy
workflow publishes the notebooks it built with the site (.github/workflows/gpu.yml).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from pathlib import Path

BRANCH = "notebooks"  # where the deploy workflow publishes them (Colab's source)
CLONE = "thousand-points"  # the folder the first cell clones into, off a clone

_FRONT = re.compile(r"\A-{3}[ \t]*\n.*?\n(?:\.{3}|-{3})[ \t]*\n", re.S)
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_INCLUDE = re.compile(r'^\s*--8<--\s+"(?P<target>[^"]+)"\s*$')
_WHOLE_SNIPPET = re.compile(r"snippets/\w+\.py")
_DIRECTIVE = re.compile(r"^<!-- (?P<kind>results|access):(?P<what>[\w-]+)[^>]*-->\s*$")
_MORE = re.compile(r"^<!-- more -->\s*$")
_ADMONITION = re.compile(r'^(?:!!!|\?\?\?\+?)\s+[\w-]+(?:\s+"(?P<title>[^"]*)")?\s*$')
_LINK = re.compile(r"\]\((?P<target>[^)\s#]+\.md)(?P<anchor>#[^)\s]*)?\)")
_NEEDS_MORE = re.compile(r"GPU only|cuobjdump")
_TITLE = re.compile(r"^# (?P<title>.+)$", re.M)

# What the page shows from the recorded GPU run, in the notebook one line each.
ON_THE_POST = {
    "zh": {
        "output": "*GPU 上记录的输出见[原文]({url})；运行上面的单元，"
        "打印的是你这台机器上的结果。*",
        "results": "*原文这里是 GPU 运行记录下的结果（表格或图），见[原文]({url})。*",
        "access": "*原文这里是一张访存示意图，见[原文]({url})。*",
    },
    "en": {
        "output": "*The output recorded on the GPU is on [the post]({url}); run the "
        "cell above and it prints your own machine's.*",
        "results": "*Here the post shows results recorded on the GPU (a table or a "
        "chart): see [the post]({url}).*",
        "access": "*Here the post shows a picture of the memory accesses: see "
        "[the post]({url}).*",
    },
}

INTRO = {
    "zh": (
        "*这是文章[《{title}》]({url})的笔记本版：正文与原文相同，代码单元就是文章里"
        "的片段，顺序也一样。请先运行第一个代码单元：如果不在仓库克隆的根目录下"
        "（比如在 Colab 上），它会克隆仓库、装好这个包，再告诉你核函数跑在哪块 GPU "
        "上；没有 GPU 时核函数在 CPU 后端上运行，结果一样，只是慢得多。*"
    ),
    "en": (
        "*This is the post [{title}]({url}) as a notebook: the same prose, and as its "
        "code cells the snippets the post shows, in order. Run the first code cell "
        "first: outside a clone of the repository (on Colab, say) it clones the "
        "repository and installs the package, then says which GPU the kernels run "
        "on; without a GPU they run on the CPU backend, with the same results, only "
        "much more slowly.*"
    ),
}

# The first code cell: the same code in both languages, its comments in each.
SETUP_COMMENTS = {
    "zh": {
        "head": "# 准备：本项目的包、它的代码，和一块 GPU（没有就用 CPU 后端）",
        "clone": "# 不在仓库克隆的根目录下（比如 Colab）：克隆一份，进到里面",
        "install": "# 装上这个包和片段要用的库（有 GPU 时连 PyCUDA 一起装）",
        "magic": "# 有的片段需要某种 GPU 或工具：这台机器没有时，启动器会拒绝并说明"
        "原因，\n# 单元打印出原因，笔记本接着往下跑",
        "gpu": "# 核函数在哪里运行",
    },
    "en": {
        "head": "# Set-up: this project's package, its code, and a GPU (or else the "
        "CPU backend)",
        "clone": "# Not at the root of a clone of the repository (Colab, say): "
        "clone one and go in",
        "install": "# The package and what the snippets use (PyCUDA where there is "
        "a GPU)",
        "magic": "# Some snippets need a GPU or a tool a machine may lack: there\n"
        "# their launcher refuses, saying why, and the cell prints that and goes on",
        "gpu": "# Where the kernels run",
    },
}

NO_REPOSITORY = {
    "zh": "这次构建不知道仓库的地址，请在仓库克隆的根目录下打开这个笔记本",
    "en": "this build knows no repository address: open this notebook at the "
    "root of a clone of the repository",
}


class NotebookError(ValueError):
    """A post this module cannot turn into a notebook; the message says where."""


def setup_cell(lang: str, repo_url: str | None) -> str:
    c = SETUP_COMMENTS[lang]
    return f'''{c["head"]}
import os
import re
import subprocess
import sys
from pathlib import Path

from IPython.core.magic import register_cell_magic

REPOSITORY = {repo_url!r}

{c["clone"]}
if not Path("snippets").is_dir():
    if REPOSITORY is None:
        raise RuntimeError({NO_REPOSITORY[lang]!r})
    if not Path("{CLONE}").is_dir():
        git = ["git", "clone", "--depth", "1", REPOSITORY, "{CLONE}"]
        subprocess.run(git, check=True)
    os.chdir("{CLONE}")
    {c["install"]}
    gpu = subprocess.run(["nvidia-smi"], capture_output=True).returncode == 0
    extras = "gpu,snippets" if gpu else "snippets"
    pip = [sys.executable, "-m", "pip", "install", "-q", f".[{{extras}}]"]
    subprocess.run(pip, check=True)

{c["magic"]}
REFUSED = re.compile(r"runs (?:only )?on a GPU|\\bsm_\\d+a?\\b|is not installed")


@register_cell_magic
def skip_if_unsupported(line, cell):
    try:
        exec(compile(cell, "<cell>", "exec"), get_ipython().user_ns)
    except (Exception, SystemExit) as e:  # a snippet may stop with SystemExit
        if not REFUSED.search(str(e)):
            raise
        print(f"skipped on this machine: {{type(e).__name__}}: {{e}}")


{c["gpu"]}
from thousand.cuda import device_info, gpu_status, on_cpu

what = gpu_status()[1]  # the GPU's name, or why there is none
if on_cpu():
    print(f"CPU backend ({{what}})")
else:
    print(f"GPU: {{what}}, compute capability {{device_info()['compute_capability']}}")
'''


def _markdown_cell(text: str) -> dict | None:
    text = text.strip("\n")
    if not text.strip():
        return None
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def _code_cell(text: str) -> dict:
    return {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {},
        "outputs": [],
        "source": text.rstrip("\n"),
    }


def expand(lines: list[str], root: Path) -> list[str]:
    """Include lines expanded as the site's pymdownx.snippets expands them."""
    import markdown

    md = markdown.Markdown(
        extensions=["pymdownx.snippets"],
        extension_configs={
            "pymdownx.snippets": {"base_path": [str(root)], "check_paths": True}
        },
    )
    return md.preprocessors["snippet"].run(lines)


def snippet_cell(target: str, root: Path) -> str:
    """The code cell showing snippets/<name>.py: the file as it is, with the
    `%%skip_if_unsupported` line over a snippet that may be refused, and `__file__`
    set where the snippet finds its own files through it (sys.argv where it parses
    a command line)."""
    # expanded as the page expands it: the file without its section markers
    source = "\n".join(expand([f'--8<-- "{target}"'], root))
    docstring = re.match(r'\s*"""(.*?)"""', source, re.S)
    head = []
    if docstring and _NEEDS_MORE.search(docstring.group(1)):
        head.append("%%skip_if_unsupported")
    if re.search(r"\b__file__\b", source):
        # absolute, as Python sets it for a script: the compiler runs elsewhere
        head.append(f'__file__ = os.path.abspath("{target}")  # this cell\'s file')
    if re.search(r"^main\(\)", source, re.M):
        # a command-line program's main reads sys.argv: give it the script's own,
        # not the notebook kernel's
        head.append(f'sys.argv = ["{target}"]  # run as a script, with no arguments')
    return "\n".join([*head, source.rstrip("\n")])


def cells(
    markdown_text: str,
    lang: str,
    root: Path,
    post_url: str,
    link: Callable[[str], str | None],
) -> list[dict]:
    """The post `markdown_text` (front matter and all) as a list of cells, the
    setup cell not included. `link(path)` gives the absolute address of a page the
    post links to by its Markdown path (None to leave the link as it is)."""
    text = _FRONT.sub("", markdown_text, count=1)
    lines = text.split("\n")
    out: list[dict] = []
    prose: list[str] = []
    said = ON_THE_POST[lang]

    def flush():
        cell = _markdown_cell("\n".join(prose))
        if cell:
            out.append(cell)
        prose.clear()

    i = 0
    dedent = None  # an admonition's body: its indent, taken off
    while i < len(lines):
        line = lines[i]
        if dedent is not None:
            if line.strip() and not line.startswith(dedent):
                dedent = None
            else:
                line = line[len(dedent) :] if line.startswith(dedent) else line
        adm = _ADMONITION.match(line)
        if adm:
            title = adm.group("title")
            if title:
                prose.append(f"**{title}**")
                prose.append("")
            dedent = " " * 4
            i += 1
            continue
        fence = _FENCE.match(line)
        if fence:
            indent, mark = fence.group("indent"), fence.group("fence")
            body = []
            j = i + 1
            while j < len(lines):
                inner = lines[j]
                if dedent is not None and inner.startswith(dedent):
                    inner = inner[len(dedent) :]
                if inner.strip() == mark and inner.startswith(indent):
                    break
                body.append(inner)
                j += 1
            else:
                raise NotebookError(f"a code block opened at line {i + 1} never closes")
            includes = [m for m in map(_INCLUDE.match, body) if m]
            whole = [b for b in body if b.strip()]
            if (
                len(whole) == 1
                and includes
                and _WHOLE_SNIPPET.fullmatch(includes[0].group("target"))
            ):
                flush()
                out.append(_code_cell(snippet_cell(includes[0].group("target"), root)))
            else:
                shown = expand([b[len(indent) :] for b in body], root)
                prose.append(f"{mark}{fence.group('info')}")
                prose.extend(shown)
                prose.append(mark)
            i = j + 1
            continue
        directive = _DIRECTIVE.match(line.strip())
        if directive:
            kind, what = directive.group("kind"), directive.group("what")
            key = "output" if (kind, what) == ("results", "output") else kind
            if key == "results" and what == "device":
                i += 1
                continue  # which run the page shows: nothing to run here
            prose.append(said[key].format(url=post_url))
        elif not _MORE.match(line.strip()):
            if line.startswith("## ") and dedent is None:
                flush()  # a cell per section: one can be run or read apart
            prose.append(_LINK.sub(lambda m: _absolute(m, link), line))
        i += 1
    flush()
    return out


def _absolute(m: re.Match, link) -> str:
    url = link(m.group("target"))
    if url is None:
        return m.group(0)
    return f"]({url}{m.group('anchor') or ''})"


def title_of(markdown_text: str) -> str:
    found = _TITLE.search(_FRONT.sub("", markdown_text, count=1))
    return found.group("title").strip() if found else ""


def notebook(
    markdown_text: str,
    lang: str,
    root: Path,
    post_url: str,
    repo_url: str | None,
    link: Callable[[str], str | None] = lambda path: None,
) -> dict:
    """The post as a notebook (nbformat 4, as a dict ready for json.dumps)."""
    if lang not in INTRO:
        raise NotebookError(f"lang: got {lang!r}, expected one of {sorted(INTRO)}")
    body = cells(markdown_text, lang, root, post_url, link)
    intro = INTRO[lang].format(title=title_of(markdown_text), url=post_url)
    # the title first, then the intro, the set-up, and the post after its title
    first = body[0] if body and body[0]["cell_type"] == "markdown" else None
    head: list[dict] = []
    if first is not None and first["source"].startswith("# "):
        title, _, rest = first["source"].partition("\n")
        head.append(_markdown_cell(title))
        body[0] = _markdown_cell(rest) or {}
        body = [c for c in body if c]
    head += [_markdown_cell(intro), _code_cell(setup_cell(lang, repo_url))]
    return {
        "cells": head + body,
        "metadata": {
            "kernelspec": {
                "display_name": "Python 3",
                "language": "python",
                "name": "python3",
            },
            "language_info": {"name": "python"},
            "accelerator": "GPU",  # Colab: open on a GPU runtime
            "colab": {"provenance": [], "gpuType": "T4"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def dumps(nb: dict) -> str:
    """The notebook as the file's text; each cell gets the id nbformat 4.5 wants."""
    for n, cell in enumerate(nb["cells"]):
        cell.setdefault("id", f"cell-{n}")
    return json.dumps(nb, ensure_ascii=False, indent=1) + "\n"


def colab_url(repo_url: str | None, lang: str, slug: str) -> str | None:
    """Colab's address for the post's notebook on the branch `notebooks` of a
    GitHub repository; None for any other host or none."""
    if not repo_url:
        return None
    m = re.fullmatch(r"https://github\.com/([\w.-]+)/([\w.-]+?)/?", repo_url)
    if m is None:
        return None
    return (
        f"https://colab.research.google.com/github/{m.group(1)}/{m.group(2)}"
        f"/blob/{BRANCH}/{lang}/{slug}.ipynb"
    )


LINKS = {
    "zh": {
        "download": "下载笔记本",
        "colab": "在 Colab 中打开",
        "no_repo": "没有“在 Colab 中打开”：这次构建没有拿到仓库地址（REPO_URL），"
        "而 Colab 只能从 GitHub 打开笔记本。",
        "not_github": "没有“在 Colab 中打开”：仓库不在 GitHub 上，而 Colab 只能从 "
        "GitHub 上的仓库打开笔记本。",
    },
    "en": {
        "download": "Download the notebook",
        "colab": "Open in Colab",
        "no_repo": "No “Open in Colab”: this build was given no repository address "
        "(REPO_URL), and Colab opens notebooks only from GitHub.",
        "not_github": "No “Open in Colab”: the repository is not on GitHub, and "
        "Colab opens notebooks only from a repository on GitHub.",
    },
}


def links_html(slug: str, repo_url: str | None, lang: str) -> str:
    """The line under a post's title: the notebook to download (`slug`.ipynb, beside
    the page) and, where the repository is on GitHub, Open in Colab; else one line
    saying why not."""
    t, filename = LINKS[lang], f"{slug}.ipynb"
    parts = [
        f'<a class="md-button tp-nb-download" href="{html.escape(filename)}" '
        f'download="{html.escape(filename)}">{t["download"]}</a>'
    ]
    colab = colab_url(repo_url, lang, slug)
    if colab is not None:
        parts.append(
            f'<a class="md-button tp-nb-colab" href="{html.escape(colab)}" '
            f'rel="noopener">{t["colab"]}</a>'
        )
    why = ""
    if colab is None:
        reason = t["no_repo"] if not repo_url else t["not_github"]
        why = f'<span class="tp-nb-why">{reason}</span>'
    return f'<p class="tp-notebook">{" ".join(parts)}{why}</p>'


_BADGE = re.compile(r'<p class="tp-point">.*?</p>', re.S)
_H1_END = re.compile(r"</h1>")


def add_links(output: str, line: str) -> str:
    """`output` (a built post) with `line` after its point badge, or its title."""
    anchor = _BADGE.search(output) or _H1_END.search(output)
    if anchor is None:
        raise NotebookError("a post with no title to put the notebook's links under")
    return output[: anchor.end()] + "\n" + line + output[anchor.end() :]
