"""`python -m thousand.site drift`: after a GPU run, the figures each post renders that
moved since the committed ledger, checked on a small repository made up here."""

import json
import shutil
import subprocess

import pytest

from thousand.site import __main__ as site_cli
from thousand.site import drift

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

SLUG = "test-gpu"


def _kernel(family, version, ms, gbps, pct_torch):
    return {
        "family": family,
        "version": version,
        "median_ms": ms,
        "gbps": gbps,
        "pct_of_copy": gbps / 40,
        "pct_of_torch": pct_torch,
        "run": 0,
    }


def _ledger(*, v2_ms, speedup, pinned, ratio, output_sha):
    return {
        "schema": 2,
        "device": {"name": "Test GPU", "slug": SLUG},
        "runs": [{"date": "2026-01-01", "commit": "abc", "command": "bench"}],
        "kernels": {
            "toy_v1": _kernel("toy", 1, 2.0, 2000.0, 50.0),
            "toy_v2": _kernel("toy", 2, v2_ms, 4.0 / v2_ms * 1000, 100.0),
            "copy_v1": _kernel("copy", 1, 1.0, 4000.0, 100.0),
        },
        "targets": [{"kernel": "toy_v2", "what": "best toy", "ratio": ratio}],
        "experiments": {
            "x-streams": {
                "run": 0,
                "result": {
                    "kind": "lines",
                    "notes": {"speedup": speedup},
                    "x": {"label": "bytes", "values": [4096, 65536]},
                    "series": {"pinned": [0.5, pinned], "pageable": [0.4, None]},
                },
            }
        },
        "snippets": {
            "s1.py": {
                "run": 0,
                "output": f"docs/assets/outputs/{SLUG}/s1.txt",
                "output_sha256": output_sha,
            }
        },
        "series": {},
        "notebooks": {},
    }


POST = """# A post

<!-- results:device -->

<!-- results:output s1 -->

<!-- results:ladder toy -->

<!-- results:targets toy -->

<!-- results:experiment x-streams -->
"""
QUIET = "# Another post\n\n<!-- results:table copy -->\n"


def _write(root, ledger, output):
    (root / "docs/assets/results").mkdir(parents=True, exist_ok=True)
    (root / f"docs/assets/results/{SLUG}.json").write_text(json.dumps(ledger))
    (root / f"docs/assets/outputs/{SLUG}").mkdir(parents=True, exist_ok=True)
    (root / f"docs/assets/outputs/{SLUG}/s1.txt").write_text(output)


def _git(root, *args):
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


OLD_OUTPUT = "64 MiB copy\n  pageable 11.362 ms 5.9 GB/s\nratio 9.30\nfirst 0.005 s\n"
NEW_OUTPUT = "64 MiB copy\n  pageable 11.500 ms 5.8 GB/s\nratio 4.66\nfirst 0.004 s\n"


@pytest.fixture
def repo(tmp_path):
    """A committed run, then a new one in the working tree: toy_v2 and the
    experiment's pinned point and the target moved a lot, the speedup a little,
    toy_v1 and copy not at all; in the output the ratio moved, the timings by less
    than 5% and the last line by one unit of its last digit."""
    for lang in ("zh", "en"):
        posts = tmp_path / "docs" / lang / "blog" / "posts"
        posts.mkdir(parents=True)
        (posts / "post.md").write_text(POST)
        (posts / "quiet.md").write_text(QUIET)
    (tmp_path / "docs/zh/index.md").write_text("# 首页\n")
    old = _ledger(v2_ms=1.0, speedup=1.50, pinned=50.0, ratio=1.04, output_sha="a")
    _write(tmp_path, old, OLD_OUTPUT)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "the first run")
    new = _ledger(v2_ms=1.25, speedup=1.53, pinned=40.0, ratio=0.93, output_sha="b")
    _write(tmp_path, new, NEW_OUTPUT)
    return tmp_path


def _figures(moved):
    return {(m.directive, m.figure) for m in moved}


def test_lists_the_figures_that_moved_post_by_post(repo):
    moved, langs = drift.drift(repo, SLUG)
    assert list(moved) == ["blog/posts/post.md"]  # quiet.md: copy did not move
    assert langs["blog/posts/post.md"] == ["zh", "en"]
    found = _figures(moved["blog/posts/post.md"])
    assert found == {
        ("results:ladder toy", "toy_v2 time (ms)"),
        ("results:ladder toy", "toy_v2 GB/s"),
        ("results:ladder toy", "toy_v2 % of copy"),
        ("results:ladder toy", "toy_v2 x previous"),
        ("results:targets toy", "best toy (toy_v2)"),
        ("results:experiment x-streams", "pinned, bytes = 65536"),
        ("results:output s1", "line 3 (ratio 4.66)"),
    }
    # each figure once, though both languages render it
    assert len(moved["blog/posts/post.md"]) == len(found)


def test_the_margin_decides(repo):
    moved, _ = drift.drift(repo, SLUG, margin=0.01)
    found = _figures(moved["blog/posts/post.md"])
    assert ("results:experiment x-streams", "notes: speedup") in found  # +2%
    assert ("results:output s1", "line 2 (pageable 11.500 ms 5.8 GB/s)") in found
    # 0.005 s -> 0.004 s is one unit of the last printed digit: rounding
    assert not any(f.startswith("line 4") for _, f in found)
    moved, _ = drift.drift(repo, SLUG, margin=0.5)
    assert moved == {}


def test_the_report_names_post_languages_and_change(repo):
    moved, langs = drift.drift(repo, SLUG)
    text = drift.report(moved, langs, "HEAD", 0.05)
    assert "blog/posts/post.md (zh, en): 7 figures" in text
    assert "toy_v2 time (ms): 1 -> 1.25 (+25.0%)" in text
    assert "line 3 (ratio 4.66): 9.3 -> 4.66 (-49.9%)" in text
    assert text.rstrip().endswith("1 post to re-read.")
    assert "No figure" in drift.report({}, {}, "HEAD", 0.05)


def test_a_new_entry_is_listed_as_newly_recorded(repo):
    ledger = json.loads((repo / f"docs/assets/results/{SLUG}.json").read_text())
    ledger["kernels"]["new_v1"] = _kernel("new", 1, 1.0, 1.0, 1.0)
    _write(repo, ledger, NEW_OUTPUT)
    for lang in ("zh", "en"):
        (repo / "docs" / lang / "blog/posts/quiet.md").write_text(
            QUIET + "\n<!-- results:table new -->\n"
        )
    moved, _ = drift.drift(repo, SLUG)
    (m,) = moved["blog/posts/quiet.md"]
    assert (m.directive, m.note) == ("results:table new", "newly recorded")


def test_nothing_moved_against_the_same_commit(repo):
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "the second run")
    assert drift.drift(repo, SLUG) == ({}, {})
    assert drift.drift(repo, SLUG, rev="HEAD~1")[0]  # the earlier run, by revision


def test_a_bad_revision_or_ledger_says_why(repo):
    with pytest.raises(drift.DriftError, match="not a revision"):
        drift.drift(repo, SLUG, rev="no-such-branch")
    with pytest.raises(drift.DriftError, match="no ledger"):
        drift.drift(repo, "other-gpu")


def test_the_command_line(capsys):
    """On this repository: the ledger the site renders, against HEAD."""
    assert site_cli.main(["drift", "--margin", "5"]) == 0
    assert "since HEAD" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="not a revision"):
        site_cli.main(["drift", "--since", "no-such-branch-anywhere"])
    with pytest.raises(SystemExit):
        site_cli.parser().parse_args(["drift", "--margin", "lots"])
