"""`python -m thousand.site build` never destroys what it did not build: a folder
holding other files is refused untouched, and a build that fails part-way leaves the
target as it was. MkDocs is replaced by a stand-in where the point is the folders
(the real two-language build takes a minute; conftest's built_site is the one)."""

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from thousand.bench.ledger import ROOT
from thousand.site import __main__ as S
from thousand.site import sources


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` and what it holds: 'as before' means equal."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def leftovers(parent: Path) -> list[str]:
    """Temporary folders a build left beside its target."""
    return sorted(
        p.name for p in parent.iterdir() if ".new-" in p.name or ".old-" in p.name
    )


def fake_mkdocs(fail_for: str | None = None, error=None):
    """What MkDocs writes, in miniature; raises for config `fail_for` after it has
    written a page, as a build that breaks half-way does."""
    calls = []

    def mkdocs(config: str, out: Path, env: dict) -> None:
        calls.append((config, out))
        out.mkdir(parents=True, exist_ok=True)
        (out / "index.html").write_text(f"new {config}")
        (out / "sitemap.xml").write_text("<urlset/>")
        if config == fail_for:
            raise error or subprocess.CalledProcessError(1, ["mkdocs", "-f", config])

    mkdocs.calls = calls
    return mkdocs


def earlier_build(folder: Path, marker: bool = True) -> dict[str, bytes]:
    (folder / "en").mkdir(parents=True)
    (folder / "index.html").write_text("old zh")
    (folder / "en" / "index.html").write_text("old en")
    (folder / "sitemap.xml").write_text("<urlset/>")
    (folder / "stale.html").write_text("a page since removed")
    if marker:  # as a build leaves it: every file it wrote listed in the marker
        S.write_marker(folder)
    return snapshot(folder)


def user_files(folder: Path) -> dict[str, bytes]:
    (folder / "thesis").mkdir(parents=True)
    (folder / "thesis" / "chapter1.tex").write_text("\\section{Irreplaceable}")
    (folder / "notes.txt").write_text("do not lose")
    return snapshot(folder)


def test_a_folder_of_other_files_is_refused_by_the_command(tmp_path):
    target = tmp_path / "mine"
    before = user_files(target)
    done = subprocess.run(
        [sys.executable, "-m", "thousand.site", "build", "--site-dir", str(target)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "mkdocs" not in done.stdout
    assert str(target) in done.stderr and "notes.txt" in done.stderr
    assert "nothing was changed" in done.stderr and "--site-dir" in done.stderr
    assert snapshot(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


@pytest.mark.parametrize("kind", ["a file", "user files", "a hidden file"])
def test_nothing_but_an_earlier_build_is_replaced(tmp_path, monkeypatch, kind):
    mkdocs = fake_mkdocs()
    monkeypatch.setattr(S, "mkdocs", mkdocs)
    target = tmp_path / "out"
    if kind == "a file":
        target.write_text("not a folder")
        before = {"": target.read_bytes()}
    elif kind == "user files":
        before = user_files(target)
    else:  # MkDocs would keep it, but the folder is still not ours to replace
        target.mkdir()
        (target / ".env").write_text("SECRET=1")
        before = snapshot(target)
    with pytest.raises(S.SiteDirError, match="nothing was changed"):
        S.build(target)
    assert mkdocs.calls == []
    after = {"": target.read_bytes()} if target.is_file() else snapshot(target)
    assert after == before


def test_the_default_folder_follows_the_same_rules(tmp_path, monkeypatch):
    mkdocs = fake_mkdocs()
    monkeypatch.setattr(S, "mkdocs", mkdocs)
    monkeypatch.setattr(S, "DEFAULT_SITE", tmp_path / "site")
    before = user_files(tmp_path / "site")
    with pytest.raises(S.SiteDirError):
        S.build()
    assert snapshot(tmp_path / "site") == before and mkdocs.calls == []


@pytest.mark.parametrize("start", ["missing", "empty", "marked"])
def test_a_build_replaces_an_earlier_one_whole(tmp_path, monkeypatch, start):
    mkdocs = fake_mkdocs()
    monkeypatch.setattr(S, "mkdocs", mkdocs)
    target = tmp_path / "deep" / "site"
    if start == "empty":
        target.mkdir(parents=True)
    elif start != "missing":
        earlier_build(target)
    S.build(target)
    built = snapshot(target)
    assert built.pop(S.MARKER).decode().startswith(S.MARKER_NOTE)
    assert built == {
        "index.html": b"new mkdocs.yml",
        "sitemap.xml": b"<urlset/>",
        "en/index.html": b"new mkdocs.en.yml",
        "en/sitemap.xml": b"<urlset/>",
    }
    # Side by side: Chinese into the fresh folder, English into its .en/ (which
    # MkDocs's emptying of the Chinese folder leaves), both beside the target.
    (zh, zh_out), (en, en_out) = sorted(mkdocs.calls)[::-1]
    assert (zh, en) == ("mkdocs.yml", "mkdocs.en.yml") and en_out == zh_out / ".en"
    assert zh_out.parent == target.parent
    assert sorted(p.name for p in target.parent.iterdir()) == ["site"]
    S.build(target)  # and the build it made is one it may replace
    assert (target / S.MARKER).is_file()


@pytest.mark.parametrize("start", ["missing", "marked"])
@pytest.mark.parametrize("how", ["mkdocs fails", "interrupted"])
def test_a_failed_build_leaves_the_target_as_it_was(tmp_path, monkeypatch, start, how):
    error = KeyboardInterrupt() if how == "interrupted" else None
    monkeypatch.setattr(S, "mkdocs", fake_mkdocs("mkdocs.en.yml", error))
    target = tmp_path / "site"
    before = None if start == "missing" else earlier_build(target)
    with pytest.raises(KeyboardInterrupt if error else subprocess.CalledProcessError):
        S.build(target)
    assert (snapshot(target) if target.exists() else None) == before
    # The half-built folder is gone too.
    expected = [] if start == "missing" else ["site"]
    assert sorted(p.name for p in tmp_path.iterdir()) == expected


def test_the_command_reports_a_failed_build_without_a_traceback(tmp_path, monkeypatch):
    monkeypatch.setattr(S, "mkdocs", fake_mkdocs("mkdocs.en.yml"))
    target = tmp_path / "site"
    before = earlier_build(target)
    with pytest.raises(SystemExit) as stop:
        S.main(["build", "--site-dir", str(target)])
    message = str(stop.value.code)
    assert "mkdocs.en.yml build failed" in message and str(target) in message
    assert "as it was" in message
    assert snapshot(target) == before


def test_a_failed_swap_puts_the_earlier_build_back(tmp_path, monkeypatch):
    monkeypatch.setattr(S, "mkdocs", fake_mkdocs())
    target = tmp_path / "site"
    before = earlier_build(target)
    real_rename = Path.rename

    def rename(self, dest):
        if ".new-" in self.name:  # the new build's move into place fails
            raise OSError("disk says no")
        return real_rename(self, dest)

    monkeypatch.setattr(Path, "rename", rename)
    with pytest.raises(OSError, match="disk says no"):
        S.build(target)
    assert snapshot(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


@pytest.mark.xdist_group("site")  # the worker that has built the site
def test_the_real_build_is_marked_and_leaves_nothing_beside_it(built_site):
    # conftest built both languages with MkDocs itself into a fresh folder.
    assert (built_site / S.MARKER).read_text().startswith(S.MARKER_NOTE)
    assert "index.html" in S.read_manifest(built_site)
    assert (built_site / "index.html").is_file()
    assert (built_site / "en" / "index.html").is_file()
    assert not leftovers(built_site.parent)
    assert S.MARKER not in (built_site / "sitemap.xml").read_text()


# Never delete a file the build did not write: each build lists what it wrote (and
# each file's checksum) in its marker, and the next one replaces the folder only
# while it holds exactly those files, unchanged.


def refused(target: Path, monkeypatch, *names: str) -> str:
    """Build into `target` and expect a refusal that changes nothing and names
    each of `names`; the message."""
    mkdocs = fake_mkdocs()
    monkeypatch.setattr(S, "mkdocs", mkdocs)
    before = snapshot(target)
    with pytest.raises(S.SiteDirError) as raised:
        S.build(target)
    message = str(raised.value)
    assert "\n" not in message and str(target) in message
    for name in names:
        assert name in message, message
    assert "nothing was changed" in message
    assert mkdocs.calls == [] and snapshot(target) == before
    assert not leftovers(target.parent)
    return message


def test_a_file_put_into_an_earlier_build_is_kept(tmp_path, monkeypatch):
    # (a) an earlier build, into which the user put a file of their own
    monkeypatch.setattr(S, "mkdocs", fake_mkdocs())
    target = tmp_path / "site"
    S.build(target)
    (target / "en" / "my-notes.txt").write_text("mine")
    (target / "drafts").mkdir()
    (target / "drafts" / "post.md").write_text("half a post")
    refused(target, monkeypatch, "en/my-notes.txt", "drafts/post.md")


def test_a_page_changed_since_the_build_is_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(S, "mkdocs", fake_mkdocs())
    target = tmp_path / "site"
    S.build(target)
    (target / "index.html").write_text("edited by hand")
    message = refused(target, monkeypatch, "index.html")
    assert "changed" in message


def test_another_bilingual_site_with_drafts_is_kept(tmp_path, monkeypatch):
    # (b) index.html, en/index.html and sitemap.xml of some other site, and drafts
    target = tmp_path / "site"
    earlier_build(target, marker=False)
    (target / "drafts").mkdir()
    (target / "drafts" / "next.md").write_text("the user's draft")
    refused(target, monkeypatch, S.MARKER)


@pytest.mark.parametrize(
    "marker", ["", "garbage\n", S.MARKER_NOTE, S.MARKER_NOTE + "not a checksum x\n"]
)
def test_files_beside_an_empty_or_damaged_marker_are_kept(
    tmp_path, monkeypatch, marker
):
    # (c) user files beside an empty (or damaged, or old-style) marker
    target = tmp_path / "site"
    user_files(target)
    (target / S.MARKER).write_text(marker)
    refused(target, monkeypatch, S.MARKER, "damaged")


def test_a_marker_alone_is_replaced(tmp_path, monkeypatch):
    # nothing of anyone's to lose: an empty marker in an otherwise empty folder
    monkeypatch.setattr(S, "mkdocs", fake_mkdocs())
    target = tmp_path / "site"
    target.mkdir()
    (target / S.MARKER).write_text("")
    S.build(target)
    assert (target / "index.html").read_text() == "new mkdocs.yml"


def test_a_file_added_while_building_is_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(S, "mkdocs", fake_mkdocs())
    target = tmp_path / "site"
    S.build(target)
    slow = fake_mkdocs()

    def mkdocs(config, out, env):
        slow(config, out, env)
        (target / "late.txt").write_text("saved during the build")

    monkeypatch.setattr(S, "mkdocs", mkdocs)
    with pytest.raises(S.SiteDirError, match="late.txt"):
        S.build(target)
    assert (target / "late.txt").read_text() == "saved during the build"
    assert not leftovers(tmp_path)


def test_the_marker_lists_every_file_the_build_wrote(tmp_path, monkeypatch):
    monkeypatch.setattr(S, "mkdocs", fake_mkdocs())
    target = tmp_path / "site"
    S.build(target)
    listed = S.read_manifest(target)
    assert sorted(listed) == sorted(n for n in snapshot(target) if n != S.MARKER)
    S.build(target)  # its own build: replaced
    assert sorted(S.read_manifest(target)) == sorted(listed)


@pytest.mark.parametrize("umask,mode", [(0o022, 0o755), (0o027, 0o750)])
@pytest.mark.parametrize("start", ["missing", "marked"])
def test_the_site_folder_is_readable_by_a_web_server(
    tmp_path, monkeypatch, umask, mode, start
):
    # a web server running as another user must be able to enter the folder
    monkeypatch.setattr(S, "mkdocs", fake_mkdocs())
    target = tmp_path / "site"
    if start == "marked":
        earlier_build(target)
    old = os.umask(umask)
    try:
        S.build(target)
    finally:
        os.umask(old)
    assert stat.S_IMODE(target.stat().st_mode) == mode


# A post MkDocs (or Material's blog) would stop on with a Python traceback, or a
# strict build would let through, is named in one line before anything is built.

# The working tree as a fresh clone holds it (test_scaffold copies it the same way).
LEFT_OUT = {".git", ".venv", ".gpu", ".cache", "site", "build", "dist"}


@pytest.fixture
def repo(tmp_path) -> Path:
    """The repository, copied: the command runs from the copy's root."""
    junk = shutil.ignore_patterns(
        "__pycache__", "*.egg-info", "node_modules", ".pytest_cache", ".ruff_cache"
    )

    def skip(folder: str, names: list[str]) -> set[str]:
        top = LEFT_OUT if Path(folder) == ROOT else set()
        return junk(folder, names) | (top & set(names))

    root = tmp_path / "repo"
    shutil.copytree(ROOT, root, ignore=skip)
    return root


def build_copy(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    return subprocess.run(
        [sys.executable, "-m", "thousand.site", "build", "--site-dir", "out"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def stopped_plainly(root: Path, *words: str) -> str:
    done = build_copy(root)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-4000:]
    assert "Traceback" not in done.stderr, done.stderr[-4000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr[-4000:]
    for word in words:
        assert word in lines[0], lines[0]
    assert "mkdocs" not in done.stdout  # stopped before MkDocs started
    assert not (root / "out").exists()
    return lines[0]


POST = "blog/posts/why-gpu.md"


def test_malformed_front_matter_is_named_with_its_line(repo):
    post = repo / "docs" / "en" / POST
    text = post.read_text(encoding="utf-8")
    post.write_text(text.replace("tags: [CUDA, GPU,", "tags: [CUDA: GPU: x,", 1))
    line = 1 + text.splitlines().index(
        next(t for t in text.splitlines() if t.startswith("tags:"))
    )
    stopped_plainly(repo, f"docs/en/{POST}:{line}", "front matter", "YAML")


def test_a_post_that_is_not_utf8_is_named_with_its_line(repo):
    post = repo / "docs" / "zh" / POST
    lines = post.read_bytes().split(b"\n")
    lines[12] = lines[12][:30] + b"\xb8\xf6" + lines[12][30:]  # GBK in UTF-8
    post.write_bytes(b"\n".join(lines))
    stopped_plainly(repo, f"docs/zh/{POST}:13", "UTF-8")


def test_a_missing_snippet_section_is_named_with_its_line(repo):
    post = repo / "docs" / "en" / POST
    text = post.read_text(encoding="utf-8")
    include = '--8<-- "src/thousand/kernels/vector_add.cu:vector-add-v2"'
    line = 1 + text.splitlines().index(include)
    post.write_text(text.replace(include, include.replace("-v2", "-v9")))
    stopped_plainly(
        repo,
        f"docs/en/{POST}:{line}",
        "vector-add-v9",
        "src/thousand/kernels/vector_add.cu",
    )


def test_a_missing_snippet_file_is_named_with_its_line(repo):
    post = repo / "docs" / "zh" / POST
    text = post.read_text(encoding="utf-8")
    include = '--8<-- "src/thousand/kernels/vector_add.cu:vector-add-v2"'
    line = 1 + text.splitlines().index(include)
    post.write_text(text.replace(include, include.replace("vector_add.cu", "nope.cu")))
    stopped_plainly(repo, f"docs/zh/{POST}:{line}", "src/thousand/kernels/nope.cu")


def test_two_posts_with_one_slug_are_both_named(repo):
    posts = repo / "docs" / "en" / "blog" / "posts"
    twin = posts / "why-gpu-again.md"
    text = (posts / "resnet.md").read_text(encoding="utf-8")
    text = re.sub(r"^point: .*\n", "", text, count=1, flags=re.M)  # slug alone
    twin.write_text(text.replace("slug: resnet", "slug: why-gpu", 1))
    stopped_plainly(
        repo, f"docs/en/{POST}", "docs/en/blog/posts/why-gpu-again.md", "why-gpu"
    )


def test_two_posts_of_one_point_are_both_named(tmp_path):
    posts = tmp_path / "docs" / "zh" / "blog" / "posts"
    posts.mkdir(parents=True)
    (posts / "a.md").write_text("---\nslug: a\npoint: B1\n---\n# A\n")
    (posts / "b.md").write_text("---\nslug: b\npoint: B1\n---\n# B\n")
    (problem,) = sources.problems_in(tmp_path)
    assert "docs/zh/blog/posts/a.md and docs/zh/blog/posts/b.md" in problem
    assert "B1" in problem
