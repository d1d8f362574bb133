"""Build both languages into one site/, or build and serve it.

    python -m thousand.site build [--site-dir DIR]  # DIR (Chinese) and DIR/en (English)
    python -m thousand.site serve [--port N] [--site-dir DIR]  # build, serve DIR,
        # and rebuild the language whose page changed (--dirty)
    python -m thousand.site measure [--page P]  # build time; a post's first-load bytes
    python -m thousand.site drift [--since REV] [--margin PCT]  # after a GPU run:
        # the figures each post renders that moved since REV (default HEAD)

One MkDocs build per language (Material's recommended set-up), both at once;
`mkdocs serve` would show only one of them, so `serve` builds both, serves the
result, and rebuilds in place what an edit changed (no reload: refresh the page).

A build never deletes a file it did not write. Each build lists in a marker file,
`.thousand-site`, every file it wrote and its SHA-256; the next build replaces
the folder only while it holds just those files, unchanged, and refuses (changing
nothing) a folder with any other file, with a changed file, or with anything in it
but no readable marker. Both languages are built into a fresh folder beside the
target and replace it only when both succeed: a failed build leaves it as it was.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from thousand.site import sources

ROOT = Path(__file__).resolve().parents[3]
# Built side by side: the Chinese fills the folder, the English en/ (see _both).
CONFIGS = ["mkdocs.yml", "mkdocs.en.yml"]
DEFAULT_SITE = ROOT / "site"
# Written into every finished build, above the list of what the build wrote.
MARKER = ".thousand-site"
MARKER_NOTE = (
    "A build of A Thousand Points (python -m thousand.site build).\n"
    "The next build replaces this folder only while it holds just the files\n"
    "listed below (SHA-256, then the path), each as this build wrote it.\n"
)
_LISTED = re.compile(r"([0-9a-f]{64}) (\".*\")")
# Folders a build must not go into: the site's sources (and what serve watches).
SOURCES = ("docs", "src", "snippets")


class SiteDirError(RuntimeError):
    """The site folder cannot be built into; nothing was changed."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _walk(folder: Path) -> tuple[list[str], list[str]]:
    """Everything under `folder`, as paths relative to it: (regular files,
    anything else: links, empty folders, sockets ...). Links are not followed."""
    files, other = [], []
    for here, dirs, names in os.walk(folder):
        base = Path(here)
        for name in list(dirs):
            path = base / name
            if path.is_symlink():
                other.append(path.relative_to(folder).as_posix())
                dirs.remove(name)
            elif not any(path.iterdir()):
                other.append(path.relative_to(folder).as_posix() + "/")
        for name in names:
            path = base / name
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink() or not path.is_file():
                other.append(rel)
            else:
                files.append(rel)
    return sorted(files), sorted(other)


def write_marker(folder: Path) -> None:
    """List every file under `folder` and its checksum in its marker."""
    files, _ = _walk(folder)
    lines = [
        f"{_sha256(folder / rel)} {json.dumps(rel, ensure_ascii=False)}\n"
        for rel in files
        if rel != MARKER
    ]
    (folder / MARKER).write_text(MARKER_NOTE + "".join(lines), encoding="utf-8")


def read_manifest(folder: Path) -> dict[str, str] | None:
    """What the build in `folder` wrote (path -> SHA-256), from its marker; None
    if the marker is missing, empty or damaged."""
    try:
        text = (folder / MARKER).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith(MARKER_NOTE):
        return None
    listed = {}
    for line in text[len(MARKER_NOTE) :].splitlines():
        found = _LISTED.fullmatch(line)
        if not found:
            return None
        try:
            rel = json.loads(found.group(2))
        except ValueError:
            return None
        parts = rel.split("/") if isinstance(rel, str) else [""]
        if "" in parts or ".." in parts:  # empty, absolute or climbing out
            return None
        listed[rel] = found.group(1)
    return listed or None


def _shown(names: list[str], most: int = 5) -> str:
    more = len(names) - most
    return ", ".join(names[:most]) + (f" and {more} more" if more > 0 else "")


def site_dir_problem(folder: Path) -> str | None:
    """Why `folder` (resolved) can never be a site folder, whatever it holds: a
    file, a folder among the site's sources or above the repository, or one that
    cannot be written. None if it may be."""
    for name in SOURCES:
        if folder == ROOT / name or folder.is_relative_to(ROOT / name):
            return (
                f"{folder} is inside {name}/, the site's sources: build "
                "somewhere else (the default is site/ in the repository)"
            )
    if ROOT.is_relative_to(folder):
        return f"{folder} holds the repository itself: build into a folder of its own"
    if folder.exists() and not folder.is_dir():
        return f"{folder} is a file, not a folder"
    # The folder's parent is written (a fresh folder beside it, then a rename);
    # where it does not exist yet, its nearest existing ancestor.
    parent = folder.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        return f"{parent} is a file, so {folder} cannot be made"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"{parent} is not writable, so a build cannot be put in {folder}"
    try:  # access() says yes to root everywhere; the filesystem may still say no
        Path(tempfile.mkdtemp(prefix=".thousand-site-probe-", dir=parent)).rmdir()
    except OSError as e:
        return f"{parent} is not writable ({e.strerror}), so {folder} cannot be made"
    return None


def check_site_dir(folder: Path) -> dict[str, str] | None:
    """Raise SiteDirError unless `folder` is missing, empty or an earlier build
    holding just the files it wrote, unchanged; what that build wrote, if any."""
    problem = site_dir_problem(folder)
    if problem:
        raise SiteDirError(
            f"{problem}: nothing was changed. Choose another folder with --site-dir."
        )
    if not folder.exists():
        return None
    files, other = _walk(folder)
    files = [rel for rel in files if rel != MARKER]
    if not files and not other:
        return None  # empty, or an empty marker alone: nothing of anyone's to lose
    listed = read_manifest(folder)
    if listed is None:
        state = "is damaged" if (folder / MARKER).exists() else "is missing"
        raise SiteDirError(
            f"{folder} holds files ({_shown(files + other)}) and its build marker "
            f"{MARKER} {state}, so they may not be an earlier build of this site, "
            f"and a build never deletes a file it did not write: nothing was "
            f"changed. Build into a new or empty folder (--site-dir DIR), or move "
            f"those files away first."
        )
    foreign = [rel for rel in files + other if rel not in listed]
    changed = [
        rel for rel in files if rel in listed and _sha256(folder / rel) != listed[rel]
    ]
    if foreign or changed:
        why = []
        if foreign:
            why.append(f"files the earlier build did not write ({_shown(foreign)})")
        if changed:
            why.append(f"files changed since it wrote them ({_shown(changed)})")
        raise SiteDirError(
            f"{folder} holds {' and '.join(why)}, and a build never deletes a "
            f"file it did not write: nothing was changed. Move those files out of "
            f"it (or build into another folder with --site-dir DIR), then build again."
        )
    return listed


def mkdocs(config: str, out: Path, env: dict, dirty: bool = False) -> None:
    """One language's strict MkDocs build into `out` (tests replace this step);
    `dirty`: serve's rebuild in place, not strict (MkDocs warns of every dirty
    build), whose warnings the next full build still fails on."""
    cmd = [sys.executable, "-m", "mkdocs", "build", "-f", config]
    cmd += ["--dirty", "--no-strict"] if dirty else ["--strict"]
    cmd += ["--site-dir", str(out)]
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=ROOT, check=True, env=env)


def build(site_dir: Path | None = None, site_url: str | None = None) -> None:
    """Both languages. `site_url` (else $SITE_URL, else the default local server) is
    where the site will be served: the feeds' links and the sitemaps use it, and
    Material's language switch checks the sitemap before it keeps the reader on the
    same page. Raises SiteDirError (nothing touched) for a folder holding other
    files, sources.SourceError (nothing built) for a page MkDocs cannot build,
    and CalledProcessError (the folder as it was) when MkDocs fails."""
    # resolve(): a symlinked folder is replaced where it really is
    target = Path(site_dir or DEFAULT_SITE).resolve()
    check_site_dir(target)
    sources.check(ROOT)  # what MkDocs would stop on with a traceback, by line
    urls = {}
    if site_url:
        base = site_url.rstrip("/") + "/"
        urls = {"SITE_URL": base, "SITE_URL_EN": base + "en/"}
    env = {**os.environ, **urls, "NO_MKDOCS_2_WARNING": "1"}  # banner: not news
    target.parent.mkdir(parents=True, exist_ok=True)
    # Beside the target, so that moving it in is a rename on one filesystem.
    fresh = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-", dir=target.parent))
    try:
        _both(fresh, env)
        (fresh / ".en").rename(fresh / "en")
        write_marker(fresh)
        # mkdtemp's folder is the owner's alone: open it as mkdir would have
        # (a web server running as another user must be able to read it).
        fresh.chmod(0o777 & ~_umask())
        listed = check_site_dir(target)  # again: a file saved there meanwhile
        _replace(target, fresh, listed)
    finally:
        if fresh.exists():  # the build failed (or was interrupted) before the swap
            shutil.rmtree(fresh, ignore_errors=True)


def _both(fresh: Path, env: dict) -> None:
    """Both languages at once, one process each (a machine has two cores or more):
    Chinese into `fresh`, English into `fresh/.en`, which MkDocs's emptying of
    `fresh` leaves alone (it keeps names that start with a dot). The first
    failure, in CONFIGS order, is raised once both have ended."""
    outs = {"mkdocs.yml": fresh, "mkdocs.en.yml": fresh / ".en"}
    errors: dict[str, BaseException] = {}

    def one(config: str) -> None:
        try:
            mkdocs(config, outs[config], env)
        except BaseException as e:  # raised below, in this thread
            errors[config] = e

    threads = [threading.Thread(target=one, args=(c,)) for c in CONFIGS]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for config in CONFIGS:
        if config in errors:
            raise errors[config]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _replace(target: Path, fresh: Path, listed: dict[str, str] | None) -> None:
    """Move `fresh` to `target`; the old build goes aside first, then away: the
    files in `listed` (what it wrote) and the folders they leave empty."""
    if not target.exists():
        fresh.rename(target)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
    old.rmdir()  # only its unique name is wanted: rename needs it free
    target.rename(old)
    try:
        fresh.rename(target)
    except BaseException:
        old.rename(target)  # put the earlier build back
        raise
    _discard(old, listed or {})


def _discard(old: Path, listed: dict[str, str]) -> None:
    """Delete the files of `listed` (and the marker) under `old`, then every
    folder left empty; anything else stays, and is named."""
    for rel in [*listed, MARKER]:
        path = old / rel
        if path.is_file() and not path.is_symlink():
            path.unlink()
    for here, _, _ in sorted(os.walk(old), key=lambda w: -len(Path(w[0]).parts)):
        try:
            Path(here).rmdir()
        except OSError:
            pass  # not empty
    if old.exists():
        files, other = _walk(old)
        print(
            f"python -m thousand.site: kept {old}: it holds files the earlier "
            f"build did not write ({_shown(files + other)})",
            file=sys.stderr,
        )


def rebuild(site_dir: Path, changed: list[Path], site_url: str | None = None) -> None:
    """After `changed` files were edited, bring the build in `site_dir` up to date
    in place, as `serve` does: only the language whose docs changed (both for
    anything else), `--dirty` (MkDocs writes again only the pages whose source is
    newer than their output; the blog's index pages are rendered anew)."""
    sources.check(ROOT)
    langs = set()
    for path in changed:
        rel = path.resolve().relative_to(ROOT) if path.is_absolute() else path
        parts = rel.parts
        if parts[:1] == ("docs",) and parts[1:2] in (("zh",), ("en",)):
            langs.add(parts[1])
        else:
            langs |= {"zh", "en"}
    urls = {}
    if site_url:
        urls = {"SITE_URL": site_url, "SITE_URL_EN": site_url + "en/"}
    env = {**os.environ, **urls, "NO_MKDOCS_2_WARNING": "1"}
    for lang, config in (("zh", "mkdocs.yml"), ("en", "mkdocs.en.yml")):
        if lang in langs:
            out = site_dir if lang == "zh" else site_dir / "en"
            index = out / "search" / "search_index.json"
            before = index.read_text(encoding="utf-8") if index.exists() else None
            mkdocs(config, out, env, dirty=True)
            if before is not None and index.exists():
                index.write_text(
                    _merged_index(before, index.read_text(encoding="utf-8")),
                    encoding="utf-8",
                )


def _merged_index(before: str, after: str) -> str:
    """A dirty build's search index holds only the pages it wrote again: those
    pages' entries from it, every other page's from the index before."""
    old, new = json.loads(before), json.loads(after)

    def page(doc: dict) -> str:
        return doc["location"].split("#", 1)[0]

    fresh = {page(d) for d in new["docs"]}
    kept = [d for d in old["docs"] if page(d) not in fresh]
    return json.dumps({**new, "docs": kept + new["docs"]}, ensure_ascii=False)


WATCHED = ("docs", "mkdocs.yml", "mkdocs.en.yml", "src/thousand/site", "snippets")


def _mtimes() -> dict[Path, float]:
    found = {}
    for name in WATCHED:
        top = ROOT / name
        for path in [top] if top.is_file() else top.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                found[path] = path.stat().st_mtime
    return found


def _watch(site_dir: Path, site_url: str) -> None:
    """Rebuild (`rebuild`) whenever a watched file changes; runs until the process
    ends. A failed rebuild says so and waits for the next change."""
    seen = _mtimes()
    while True:
        time.sleep(1.0)
        now = _mtimes()
        changed = [p for p in now.keys() | seen.keys() if now.get(p) != seen.get(p)]
        if not changed:
            continue
        seen = now
        start = time.perf_counter()
        try:
            rebuild(site_dir, changed, site_url)
        except subprocess.CalledProcessError:
            print("rebuild failed (messages above); waiting for the next change")
            continue
        except sources.SourceError as e:
            print(f"not rebuilt: {e}; waiting for the next change", flush=True)
            continue
        print(f"rebuilt in {time.perf_counter() - start:.1f} s", flush=True)


def serve(port: int, site_dir: Path | None = None) -> None:
    folder = Path(site_dir or DEFAULT_SITE).resolve()
    handler = functools.partial(
        http.server.SimpleHTTPRequestHandler, directory=str(folder)
    )
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as httpd:
        url = f"http://127.0.0.1:{port}/"
        threading.Thread(target=_watch, args=(folder, url), daemon=True).start()
        print(
            f"serving both languages at {url} (English at /en/), rebuilding "
            f"when a page changes; Ctrl-C stops"
        )
        httpd.serve_forever()


def folder_name(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("give a folder, not an empty name")
    return Path(text)


def port_number(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port (1 to 65535)")
    return port


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m thousand.site",
        description="Build both languages of the site (Chinese at /, English at "
        "/en/), serve them, measure the build and a first visit, or list the "
        "figures on the posts that a GPU run moved.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    site_dir = {
        "type": folder_name,
        "default": None,
        "help": "where to build (default: site/ in the repository); refused if "
        "it holds anything but an earlier build",
    }
    b = sub.add_parser("build", help="build both languages")
    b.add_argument("--site-dir", **site_dir)
    s = sub.add_parser("serve", help="build, then serve on 127.0.0.1")
    s.add_argument("--port", type=port_number, default=8000, help="default 8000")
    s.add_argument("--site-dir", **site_dir)
    m = sub.add_parser("measure", help="build time and a post's first-load bytes")
    m.add_argument("--page", default="blog/why-gpu/", help="default blog/why-gpu/")
    d = sub.add_parser(
        "drift",
        help="after a GPU run: the figures each post renders that moved since a "
        "revision, so those posts are re-read before the run is committed",
    )
    d.add_argument(
        "--since",
        default="HEAD",
        metavar="REV",
        help="compare the working tree's ledger with the one committed at REV "
        "(default HEAD: the run before this one)",
    )
    d.add_argument(
        "--margin",
        type=percent,
        default=5.0,
        metavar="PCT",
        help="list a figure that moved by more than PCT percent (default 5)",
    )
    d.add_argument(
        "--ledger",
        default=None,
        metavar="SLUG",
        help="the GPU model's ledger, docs/assets/results/SLUG.json (default: the "
        "one the pages render)",
    )
    return p


def percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value < 1000:
        raise argparse.ArgumentTypeError(f"{value} is not a margin in percent")
    return value


def rendered_ledger() -> str:
    """extra.results in mkdocs.yml: the GPU model whose ledger the pages render."""
    found = re.search(r"^\s+results:\s*(\S+)", (ROOT / "mkdocs.yml").read_text(), re.M)
    if not found:
        sys.exit("python -m thousand.site drift: mkdocs.yml names no extra.results")
    return found.group(1)


def run_drift(since: str, margin_pct: float, slug: str | None) -> int:
    from thousand.site import drift

    margin = margin_pct / 100
    try:
        moved, langs = drift.drift(ROOT, slug or rendered_ledger(), since, margin)
    except drift.DriftError as e:
        sys.exit(f"python -m thousand.site drift: {e}")
    print(drift.report(moved, langs, since, margin), end="")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    if getattr(args, "site_dir", None) is not None:  # before any work
        problem = site_dir_problem(Path(args.site_dir).resolve())
        if problem:
            p.error(f"--site-dir: {problem}")
    if args.command == "drift":
        return run_drift(args.since, args.margin, args.ledger)
    if args.command == "measure":
        from thousand.site import browser, measure

        try:
            measure.main(args.page)
        except browser.NoBrowser as e:
            sys.exit(f"measure needs a browser: {e}")
        return 0
    local = f"http://127.0.0.1:{args.port}/" if args.command == "serve" else None
    where = Path(args.site_dir or DEFAULT_SITE).resolve()
    try:
        build(args.site_dir, site_url=local)
    except SiteDirError as e:
        sys.exit(f"python -m thousand.site: {e}")
    except sources.SourceError as e:
        sys.exit(f"python -m thousand.site: {e}: nothing was built")
    except OSError as e:  # the disk is full, a folder vanished ...
        sys.exit(f"python -m thousand.site: cannot build into {where}: {e}")
    except subprocess.CalledProcessError as e:
        config = e.cmd[e.cmd.index("-f") + 1] if "-f" in e.cmd else "mkdocs"
        sys.exit(
            f"python -m thousand.site: the {config} build failed (exit "
            f"{e.returncode}; its messages are above); {where} is as it was"
        )
    if args.command == "serve":
        try:
            serve(args.port, args.site_dir)
        except OSError as e:  # the port is taken, most often
            sys.exit(f"python -m thousand.site: cannot serve on port {args.port}: {e}")
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
