"""A page whose point waits for its GPU run: what the results directives do before
the ledger records it. The strict build stops, saying that this is expected and
what to do; with THOUSAND_ALLOW_UNRECORDED=1 each directive becomes a red box, and
the device box of a page that shows nothing recorded claims no run."""

import pytest

from thousand.bench import ledger as L
from thousand.site.render import DirectiveError, Results

NEW_PAGE = """\
<!-- results:output b99_not_yet -->

<!-- results:device -->

<!-- results:table not_yet -->
"""


@pytest.fixture(scope="module")
def results():
    return Results(L.ledger_files()[0].stem, "en")


def test_the_strict_build_says_the_gpu_run_is_due(results, monkeypatch):
    monkeypatch.delenv("THOUSAND_ALLOW_UNRECORDED", raising=False)
    with pytest.raises(DirectiveError) as info:
        results.render_page(NEW_PAGE, "blog/posts/new.md")
    message = str(info.value)
    assert "snippets/b99_not_yet.py has not run" in message
    assert L.WAITING in message


def test_a_preview_shows_every_gap_and_claims_no_run(results, monkeypatch):
    monkeypatch.setenv("THOUSAND_ALLOW_UNRECORDED", "1")
    page = results.render_page(NEW_PAGE, "blog/posts/new.md")
    assert page.count('!!! danger "NOT RECORDED YET"') == 3
    assert "no run is its run" in page
    assert results.ledger["device"]["name"] not in page


def test_the_device_box_stays_where_something_is_recorded(results, monkeypatch):
    monkeypatch.setenv("THOUSAND_ALLOW_UNRECORDED", "1")
    page = results.render_page(
        NEW_PAGE + "\n<!-- results:table copy -->\n", "blog/posts/new.md"
    )
    assert page.count('!!! danger "NOT RECORDED YET"') == 2
    assert results.ledger["device"]["name"] in page
