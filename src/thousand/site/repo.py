"""The repository's address on every post, at the top of "Run it yourself", where
the commands assume a clone of it.

mkdocs.yml takes it from REPO_URL (set by the deploy workflow); a local build
without it asks git for the clone's `origin`. Where neither knows it, posts say
nothing rather than show a made-up address.
"""

from __future__ import annotations

import html
import re
import subprocess
from pathlib import Path

HEADING = {"zh": "自己跑一遍", "en": "Run it yourself"}
LINE = {
    "zh": "代码在仓库 {link} 里，下面的命令都在它的克隆的根目录下运行。",
    "en": "The code lives in the repository {link}; the commands below run from "
    "the root of a clone.",
}


def from_git(folder: Path) -> str | None:
    """The web address of the clone's `origin` (an SSH remote made https), or None."""
    try:
        out = subprocess.run(
            ["git", "-C", str(folder), "remote", "get-url", "origin"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    url = out.stdout.strip() if out.returncode == 0 else ""
    ssh = re.fullmatch(r"(?:ssh://)?git@([^:/]+)[:/](.+?)(?:\.git)?/?", url)
    if ssh:
        return f"https://{ssh.group(1)}/{ssh.group(2)}"
    if url.startswith(("https://", "http://")):
        return url.removesuffix(".git")
    return None


def add(output: str, repo_url: str | None, lang: str) -> str:
    """A post's HTML with the repository's address under its Run it yourself
    heading (unchanged without an address)."""
    if not repo_url:
        return output
    heading = re.compile(
        r'(<h2 id="[^"]*">' + re.escape(HEADING[lang]) + r"<a [^>]*>[^<]*</a></h2>)"
    )
    shown = html.escape(re.sub(r"^https?://", "", repo_url))
    link = f'<a href="{html.escape(repo_url)}">{shown}</a>'
    line = f'\n<p class="tp-repo">{LINE[lang].format(link=link)}</p>'
    return heading.sub(lambda m: m.group(1) + line, output, count=1)
