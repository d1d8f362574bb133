"""The benchmarks pages (src/thousand/site/benchmarks.py): an overview that lists
every kernel family by track and post and gives each GPU's device, runs and targets,
and one generated page per post with a chart and a table per family. Every version
of every ledger is in its family's table, each figure the ledger's own value
formatted, "–" where a figure is missing; every chart and table names the baseline
each version is measured against; a ledger the pages cannot render is a clear error.
Rendered directly, without a site build."""

import json
import re

import pytest

from thousand.bench import ledger as L
from thousand.site import benchmarks as B
from thousand.site import render, tracks

LEDGERS = B.load_all()
FAMILIES = B._families_of(LEDGERS)
PAGES = B.catalogue(FAMILIES)


def _overview(lang: str, ledgers=None) -> str:
    md = (L.ROOT / "docs" / lang / B.INDEX).read_text()
    return B.render_page(md, B.INDEX, lang, ledgers)


def _sections(markdown: str, level: str = "##") -> dict[str, str]:
    """Heading -> its part of the page, up to the next heading of that level."""
    parts = re.split(rf"^{level} (.+?) \{{ #[\w-]+ \}}$", markdown, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _families(markdown: str) -> dict[str, str]:
    """Family -> its section of a generated page."""
    return {name.strip("`"): s for name, s in _sections(markdown).items()}


def _rows(section: str) -> dict[str, dict[str, str]]:
    """Kernel name -> {header: cell} for the table rows of a section."""
    rows, header = {}, None
    for line in section.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        if line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if header is None:
            header = cells
            continue
        row = dict(zip(header, cells, strict=True))
        name = re.match(r"`(\w+)`", cells[0]).group(1)
        assert name not in rows, f"{name} twice in one table"
        rows[name] = row
    return rows


def _per_gpu(section: str) -> dict[str, str]:
    """A family's section split into one part per GPU (its ### headings)."""
    parts = re.split(r"^### (.+)$", section, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _of_gpu(section: str, gpu: str) -> str:
    """A family's section, or its part for `gpu` where several GPUs recorded it."""
    return _per_gpu(section).get(gpu, section)


def _page_of(family: str, ledgers=None, lang: str = "en") -> str:
    ledgers = LEDGERS if ledgers is None else ledgers
    pages = B.catalogue(B._families_of(ledgers))
    (page,) = [p for p in pages if family in p.home]
    return B.render_post_page(page, pages, ledgers, lang)


# -- which page a family is on ----------------------------------------------------


def test_every_family_has_one_page_and_the_pages_follow_the_tracks():
    homes = [f for p in PAGES for f in p.home]
    assert sorted(homes) == sorted(FAMILIES), "each family on exactly one page"
    order = [p["id"] for t in tracks.tracks().values() for p in t["points"]]
    points = [p.point for p in PAGES if p.point]
    assert points == sorted(points, key=order.index)
    assert all(p.point is None for p in PAGES[len(points) :])  # other kernels last


def test_a_family_lives_with_its_ladder_and_every_post_lists_what_it_shows():
    home = B._homes(PAGES)
    assert home["matmul"].slug == "matrix-multiplication"  # B1 tables it, B9 ladders
    assert home["copy"].slug == "why-gpu"  # the first post in track order
    assert home["transpose"].slug == "memory-hierarchy"  # not B17, which tables it
    why = next(p for p in PAGES if p.slug == "why-gpu")
    assert "matmul" in why.shows and "matmul" not in why.home


def test_both_languages_get_the_same_pages():
    zh, en = B.pages("zh", LEDGERS), B.pages("en", LEDGERS)
    assert set(zh) == set(en) and len(zh) >= 10
    assert [list(x.values())[0] for x in B.nav("zh", LEDGERS)] == list(zh)
    for uri in zh:
        assert uri.startswith("benchmarks/") and uri.endswith(".md")
        assert "<!--" not in zh[uri] and "<!--" not in en[uri]


def test_a_family_no_post_shows_goes_to_the_other_kernels_page():
    pages = B.catalogue(FAMILIES | {"zz_unshown"})
    assert pages[-1].slug == B.OTHER and "zz_unshown" in pages[-1].home


def test_the_nav_gets_the_pages_under_the_overview():
    from thousand.site.hooks import _nav_with

    nav = [{"Home": "index.md"}, {"Benchmarks": B.INDEX}, {"Glossary": "g.md"}]
    pages = B.nav("en", LEDGERS)
    out = _nav_with(nav, pages)
    assert out[0] == nav[0] and out[2] == nav[2]
    assert out[1] == {"Benchmarks": [B.INDEX, *pages]}
    assert pages[0] == {"A1 · The McCulloch–Pitts neuron": "benchmarks/mp-neuron.md"}


# -- the overview ---------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_overview_links_every_family_and_every_page(lang):
    md = (L.ROOT / "docs" / lang / B.INDEX).read_text()
    assert len(B.DIRECTIVE.findall(md)) == 1, f"{lang}: one <!-- benchmarks -->"
    assert "{ #columns }" in md  # the generated pages link the column guide
    out = _overview(lang)
    assert "<!-- benchmarks -->" not in out
    home = B._homes(PAGES)
    for family in FAMILIES:
        rel = home[family].uri.removeprefix("benchmarks/")
        assert f"[`{family}`]({rel}#{family})" in out, family
    for page in PAGES:
        if page.home:
            assert f"]({page.uri.removeprefix('benchmarks/')})" in out, page.slug


def test_the_device_facts_come_from_the_ledger():
    sections = _sections(_overview("en"))
    for ledger in LEDGERS:
        d = ledger["device"]
        section = sections[d["name"]]
        for text in [
            f"compute capability {d['compute_capability']}",
            f"{d['sm_count']} SMs",
            f"{d['copy_peak_gbps']:,.0f} GB/s measured",
            f"{d['peak_bandwidth_gbps']:,.0f} GB/s theoretical",
            f"driver {d['driver_release']}",
            f"nvcc {d['nvcc']}",
            f"PyCUDA {d['pycuda']}",
            f"NumPy {d['numpy']}",
            f"PyTorch {d['torch']}",
        ]:
            assert text in section, text
        for run in ledger["runs"]:  # every run, folded away below the facts
            assert run["date"] in section and str(run["commit"])[:10] in section
        for target in ledger["targets"]:
            assert f"`{target['kernel']}` " in section


# -- a family's section -------------------------------------------------------------


def test_every_version_is_in_its_family_table_as_the_ledger_has_it():
    for ledger in LEDGERS:
        d = ledger["device"]
        for family in {k["family"] for k in ledger["kernels"].values()}:
            section = _families(_page_of(family))[family]
            rows = _rows(_of_gpu(section, d["name"]))
            entries = B._entries(ledger, family)
            assert set(rows) == {f"{family}_v{k['version']}" for k in entries}
            for k in entries:
                name = f"{family}_v{k['version']}"
                row = rows[name]
                assert row["time (ms)"] == f"{k['median_ms']:.3f}", name
                if not B._compute_bound(entries):
                    assert row["GB/s"] == f"{k['gbps']:,.0f}", name
                    assert row["% of copy"] == f"{k['pct_of_copy']:.1f}%", name
                    pct = 100 * k["gbps"] / d["peak_bandwidth_gbps"]
                    assert row["% of theoretical"] == f"{pct:.1f}%", name
                else:
                    assert row["GFLOP/s"] == f"{k['gflops']:,.0f}", name
                    assert "% of copy" not in row, name
                assert row["× NumPy"] == f"{k['speedup_vs_numpy']:,.1f}×", name
                torch = k.get("pct_of_torch")  # None: PyTorch has no such operation
                expected = render.DASH if torch is None else render._pct(torch)
                assert row["% of baseline"].split("<br>")[0] == expected, name
                assert row["version: what it teaches"].startswith(f"`{name}`")


def test_matmul_v8_is_measured_against_cublas_with_tf32_on_and_says_so():
    section = _families(_page_of("matmul"))["matmul"]
    assert "Baseline: cuBLAS through PyTorch, TF32 off" in section
    assert "`matmul_v8` is measured against cuBLAS through PyTorch, TF32 on" in section
    rows = _rows(section)
    tf32 = "<small>cuBLAS through PyTorch, TF32 on</small>"
    assert rows["matmul_v8"]["% of baseline"].endswith(tf32)
    assert "<br>" not in rows["matmul_v7"]["% of baseline"]
    # in the chart, each row's mark is its own baseline, named in the legend
    chart = section[section.index("<figure") : section.index("</figure>")]
    marks = dict(re.findall(r'__label">(v\d+)<.*?mark--(b\d)"', chart))
    assert marks["v8"] != marks["v7"] == marks["v1"]
    assert f'mark--{marks["v8"]}"></span>cuBLAS through PyTorch, TF32 on' in chart
    zh = _families(_page_of("matmul", lang="zh"))["matmul"]
    assert "`matmul_v8` 的基线是 cuBLAS（经 PyTorch），开启 TF32" in zh


def test_a_chart_has_every_version_its_figure_and_a_scale_that_shows_them():
    section = _families(_page_of("vector_add"))["vector_add"]
    chart = section[section.index("<figure") : section.index("</figure>")]
    assert "data-search-exclude" in chart  # the table is what search indexes
    for k in B._entries(LEDGERS[0], "vector_add"):
        assert f'__label">v{k["version"]}<' in chart
        assert f'__value">{B._fmt(k["gbps"])}<' in chart
    # v1 (one block) is far below the rest, but the others would crowd a log
    # axis near the peak: this one is linear; the matmul ladder's is not
    assert "GB/s</span>" in chart and "mark--peak" in chart
    matmul = _families(_page_of("matmul"))["matmul"]
    assert "GFLOP/s, log scale" in matmul
    for width in re.findall(r"(?:width|left):([\d.]+)%", chart + matmul):
        assert 0 <= float(width) <= 100


def test_the_chinese_page_says_what_each_version_teaches_in_chinese():
    names = render.TEXT["zh"]["teaches_names"]
    for family in FAMILIES:
        site = L.load(L.site_slug())
        section = _families(_page_of(family, lang="zh"))[family]
        rows = _rows(_of_gpu(section, site["device"]["name"]))
        for k in B._entries(site, family):
            if k.get("teaches") in names:
                cell = rows[f"{family}_v{k['version']}"]["版本与要点"]
                assert re.search(r"[\u4e00-\u9fff]", cell), cell


def test_a_page_links_its_post_the_overview_and_families_shown_elsewhere():
    why = next(p for p in PAGES if p.slug == "why-gpu")
    md = B.render_post_page(why, PAGES, LEDGERS, "en")
    assert "(../blog/posts/why-gpu.md)" in md and "(index.md#columns)" in md
    assert "[`matmul`](matrix-multiplication.md#matmul)" in md
    assert "[`copy`](#copy)" in md  # this page's own, for a phone's reader
    assert md.startswith("---\ndescription: ")


def test_post_tables_still_render_through_the_shared_code():
    results = render.Results(LEDGERS[0]["device"]["slug"], "en")
    table = results.render_page("<!-- results:table copy -->", "blog/x.md")
    copy = LEDGERS[0]["kernels"]["copy_v2"]
    # one size per family: said once under the table, not on every row
    assert f"| `copy_v2` | {copy['median_ms']:.3f} |" in table
    assert "Sizes: `copy` 2<sup>28</sup>." in table
    assert "teaches" not in table and "%" in table


def test_a_post_table_keeps_the_columns_that_differ_from_row_to_row():
    """Sizes that differ within a family, or a check that did not pass, stay in
    their columns; only what every row shares moves under the table."""
    ledger = {
        "kernels": {
            "f_v1": _entry("f", 1, size=[1 << 20]),
            "f_v2": _entry("f", 2, size=[1 << 21]),
            "g_v1": _entry("g", 1, check={"cases": 3, "passed": False}),
        }
    }
    results = render.Results.__new__(render.Results)
    results.ledger, results.t, results.lang = ledger, render.TEXT["en"], "en"
    columns, below = results._post_columns(list(ledger["kernels"].values()), ["f", "g"])
    assert "size" in columns and "check" in columns and below == ""
    columns, below = results._post_columns([ledger["kernels"]["f_v1"]], ["f"])
    assert "size" not in columns and "check" not in columns
    assert "Sizes: `f` 2<sup>20</sup>." in below and "(3 cases)" in below


# -- a synthetic ledger: two GPUs, figures missing --------------------------------


def _entry(family, version, **fields):
    base = {
        "family": family,
        "version": version,
        "teaches": f"{family} version {version}",
        "size": [1 << 20],
        "block": "256",
        "median_ms": 0.5,
        "check": {"cases": 3, "passed": True},
    }
    return {**base, **fields}


def _ledger(name, *, device=None, kernels, targets=()):
    return L.upgrade(
        {
            "device": {
                "name": name,
                "slug": L.slug(name),
                "compute_capability": "8.0",
                "sm_count": 108,
                "total_memory_bytes": 40 * 2**30,
                "copy_peak_gbps": 1500.0,
                **(device or {}),
            },
            "run": {"date": "2030-01-02 03:04 UTC", "commit": "abcdef0123456789"},
            "kernels": {f"{k['family']}_v{k['version']}": k for k in kernels},
            "targets": list(targets),
        }
    )


@pytest.fixture
def two_gpus():
    alpha = _ledger(
        "Test GPU Alpha",
        device={"peak_bandwidth_gbps": 2000.0, "driver_release": "999.1"},
        kernels=[
            _entry("copy", 1, gbps=1500.0, pct_of_copy=100.0, pct_of_torch=95.0),
            # Run without NumPy or PyTorch, and nothing said about what it teaches:
            _entry("vector_add", 1, gbps=750.0, pct_of_copy=50.0, teaches=None),
            _entry("matmul", 1, gflops=1234.5, flops=10**9, torch_ms=0.1),
        ],
        targets=[
            {"what": "t", "kernel": "copy_v1", "ratio": 1.0, "target": 0.9, "met": 1}
        ],
    )
    beta = _ledger(
        "Test GPU Beta",  # no theoretical peak, no PyTorch, one failed check
        kernels=[
            _entry("copy", 1, gbps=1500.0, pct_of_copy=100.0),
            _entry("reduce", 2, gbps=1200.0, check={"cases": 7, "passed": False}),
        ],
    )
    return [alpha, beta]


def test_two_gpus_get_two_sections_and_a_dash_for_every_missing_figure(two_gpus):
    overview = _overview("en", two_gpus)
    sections = _sections(overview)
    assert {"Test GPU Alpha", "Test GPU Beta"} <= set(sections)
    facts = sections["Test GPU Beta"]
    assert "– theoretical" in facts and "PyTorch –" in facts and "driver –" in facts
    assert "This run recorded no benchmark targets." in facts
    assert "✅" in sections["Test GPU Alpha"]

    copy = _families(_page_of("copy", two_gpus))["copy"]
    per_gpu = _per_gpu(copy)
    assert list(per_gpu) == ["Test GPU Alpha", "Test GPU Beta"]
    alpha, beta = (_rows(per_gpu[n]) for n in per_gpu)
    assert alpha["copy_v1"]["% of theoretical"] == "75.0%"  # 1500 of 2000
    assert alpha["copy_v1"]["% of baseline"] == "95%"
    assert beta["copy_v1"]["% of theoretical"] == "–"

    vector_add = _rows(_families(_page_of("vector_add", two_gpus))["vector_add"])
    assert vector_add["vector_add_v1"]["version: what it teaches"] == "`vector_add_v1`"
    assert vector_add["vector_add_v1"]["× NumPy"] == "–"
    assert vector_add["vector_add_v1"]["% of baseline"] == "–"
    reduce = _families(_page_of("reduce", two_gpus))["reduce"]
    assert "PyTorch has no such operation" in reduce
    row = _rows(reduce)["reduce_v2"]
    assert row["checked"] == "FAILED (7 cases)"  # the column stays when one fails
    assert row["% of copy"] == "–"  # not recorded, not recomputed
    matmul = _rows(_families(_page_of("matmul", two_gpus))["matmul"])
    assert matmul["matmul_v1"]["GFLOP/s"] == "1,234"


# -- ledgers the page cannot render -------------------------------------------------


@pytest.mark.parametrize(
    "section,field",
    [("device", "sm_count"), ("device", "copy_peak_gbps"), ("run", "commit")],
)
def test_a_ledger_without_a_required_field_is_named_with_the_field(
    tmp_path, section, field
):
    ledger = json.loads(L.ledger_files()[0].read_text())
    del ledger[section][field]
    path = tmp_path / "some-gpu.json"
    path.write_text(json.dumps(ledger))
    with pytest.raises(B.LedgerError, match=rf"some-gpu\.json: {section} has no "):
        B.load_all([path])
    with pytest.raises(B.LedgerError, match=repr(field)):
        B.load_all([path])


def test_a_kernel_entry_without_its_family_is_an_error(two_gpus):
    del two_gpus[1]["kernels"]["reduce_v2"]["family"]
    with pytest.raises(B.LedgerError, match=r"beta: kernels\.reduce_v2 has no 'fam"):
        B.validate(two_gpus[1], "beta")


def test_a_ledger_that_is_not_json_is_named(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"device": ')
    with pytest.raises(B.LedgerError, match=r"broken\.json: not valid JSON"):
        B.load_all([path])


def test_no_ledger_at_all_is_an_error():
    with pytest.raises(B.LedgerError, match="no ledger in .*thousand.bench"):
        B.load_all([])


@pytest.mark.parametrize(
    "kept,shown", [("256", "256"), ("(256,)", "256"), ("(32, 8)", "32 × 8")]
)
def test_a_block_shape_reads_as_written_not_as_a_python_tuple(kept, shown):
    assert render._block_text(kept) == shown


def test_chart_sizes_are_powers_of_two_where_tables_say_so():
    assert render._power_of_two_chart(2**28) == "2²⁸"
    assert render._power_of_two_chart(4096) == "4096"  # small sizes stay numbers
    assert render._power_of_two_chart(50257) == "50257"
