"""The benchmarks page (src/thousand/site/benchmarks.py): every kernel version of
every ledger in a table, each figure the ledger's own value formatted, "–" where a
figure is missing, one section and one set of charts per GPU, and a clear error for
a ledger it cannot render. Rendered directly, without a site build."""

import json
import re

import pytest

from thousand.bench import ledger as L
from thousand.site import benchmarks as B
from thousand.site import render

LEDGERS = B.load_all()
COLUMN_OF = {
    lang: {v: k for k, v in {**render.TEXT[lang], **B.TEXT[lang]}["cols"].items()}
    for lang in ("zh", "en")
}


def _sections(markdown: str) -> dict[str, str]:
    """GPU name -> its part of the page (from its `## ` heading to the next)."""
    parts = re.split(r"^## (.+?) \{ #[\w-]+ \}$", markdown, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _rows(section: str, lang: str) -> dict[str, dict[str, str]]:
    """Kernel name -> {column id: cell} for every table row of a section."""
    rows, header = {}, None
    for line in section.splitlines():
        if not line.startswith("|") or line.startswith("|---"):
            if not line.startswith("|"):
                header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if header is None:
            header = [COLUMN_OF[lang][c] for c in cells]
            continue
        row = dict(zip(header, cells, strict=True))
        name = re.match(r"`(\w+)`", row["version_teaches"]).group(1)
        assert name not in rows, f"{name} twice in one GPU's tables"
        rows[name] = row
    return rows


def _page(lang: str, ledgers=None) -> str:
    md = (L.ROOT / "docs" / lang / "benchmarks.md").read_text()
    return B.render_page(md, "benchmarks.md", lang, ledgers)


# -- the real ledgers -------------------------------------------------------------


def test_both_pages_hold_the_directive_once_and_render_it():
    for lang in ("zh", "en"):
        md = (L.ROOT / "docs" / lang / "benchmarks.md").read_text()
        assert len(B.DIRECTIVE.findall(md)) == 1, f"{lang}: one <!-- benchmarks -->"
        out = _page(lang)
        assert "<!-- benchmarks -->" not in out
        assert len(out) > len(md) + 2000


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_version_of_every_ledger_is_in_its_gpu_table(lang):
    sections = _sections(_page(lang))
    assert set(sections) == {x["device"]["name"] for x in LEDGERS}
    for ledger in LEDGERS:
        section = sections[ledger["device"]["name"]]
        rows = _rows(section, lang)
        assert set(rows) == set(ledger["kernels"]), ledger["device"]["name"]
        assert ledger["run"]["date"] in section
        assert ledger["run"]["commit"][:10] in section
        for target in ledger["targets"]:
            assert f"`{target['kernel']}` " in section


def test_every_figure_is_the_ledger_value_formatted():
    sections = _sections(_page("en"))
    for ledger in LEDGERS:
        d = ledger["device"]
        rows = _rows(sections[d["name"]], "en")
        for name, k in ledger["kernels"].items():
            row = rows[name]
            assert row["time"] == f"{k['median_ms']:.3f}", name
            if "gbps" in k:
                assert row["rate"] == f"{k['gbps']:,.0f} GB/s", name
                assert row["pct_copy"] == f"{k['pct_of_copy']:.1f}%", name
                pct = 100 * k["gbps"] / d["peak_bandwidth_gbps"]
                assert row["pct_peak"] == f"{pct:.1f}%", name
            else:
                assert row["rate"] == f"{k['gflops']:,.0f} GFLOP/s", name
                assert "pct_copy" not in row and "pct_peak" not in row, name
            assert row["numpy"] == f"{k['speedup_vs_numpy']:,.1f}×", name
            torch = k.get("pct_of_torch")  # None: PyTorch has no such operation
            if torch is None:
                expected = render.DASH
            else:
                expected = f"{torch:.0f}%" if torch >= 1 else f"{torch:.1g}%"
            assert row["torch"] == expected, name
            assert row["check"] == f"{k['check']['cases']} cases pass", name
            assert row["version_teaches"].startswith(f"`{name}`<br>"), name


def test_the_chinese_page_says_what_each_version_teaches_in_chinese():
    sections = _sections(_page("zh"))
    names = render.TEXT["zh"]["teaches_names"]
    for ledger in LEDGERS:
        rows = _rows(sections[ledger["device"]["name"]], "zh")
        for name, k in ledger["kernels"].items():
            if k.get("teaches") in names:
                cell = rows[name]["version_teaches"]
                assert re.search(r"[\u4e00-\u9fff]", cell), cell


def test_the_device_facts_come_from_the_ledger():
    sections = _sections(_page("en"))
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


def test_the_charts_are_svg_with_every_bandwidth_version_and_are_stable():
    charts = B.svgs(LEDGERS)
    for ledger in LEDGERS:
        slug = B.gpu_slug(ledger)
        svg = charts[f"assets/benchmarks/{slug}-bandwidth.svg"].decode()
        assert svg.startswith("<?xml") and "<svg" in svg and len(svg) > 20_000
        # matplotlib writes each text as a comment above its glyph paths.
        for name, k in ledger["kernels"].items():
            if "gbps" in k:
                assert f"<!-- {name} -->" in svg, name
        peak = ledger["device"]["copy_peak_gbps"]
        assert f"{peak:,.0f} GB/s" in svg
        if any("gflops" in k for k in ledger["kernels"].values()):
            compute = charts[f"assets/benchmarks/{slug}-compute.svg"].decode()
            assert "<!-- PyTorch: matmul -->" in compute
    assert B.svgs(LEDGERS) == charts, "the SVG bytes differ from one build to the next"


def test_the_charts_are_linked_from_the_page_where_the_hook_puts_them():
    page = _page("en")
    for uri in B.svgs(LEDGERS):
        assert f"]({uri})" in page


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
    return {
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
    page = _page("en", two_gpus)
    assert "[Test GPU Alpha](#test-gpu-alpha)" in page
    sections = _sections(page)
    assert list(sections) == ["Test GPU Alpha", "Test GPU Beta"]
    alpha, beta = (_rows(sections[n], "en") for n in sections)
    assert set(alpha) == {"copy_v1", "vector_add_v1", "matmul_v1"}
    assert set(beta) == {"copy_v1", "reduce_v2"}

    assert alpha["copy_v1"]["pct_peak"] == "75.0%"  # 1500 of 2000
    assert alpha["copy_v1"]["torch"] == "95%"
    assert alpha["vector_add_v1"]["version_teaches"] == "`vector_add_v1`"
    assert alpha["vector_add_v1"]["numpy"] == "–"
    assert alpha["vector_add_v1"]["torch"] == "–"
    assert alpha["matmul_v1"]["rate"] == "1,234 GFLOP/s"
    assert beta["copy_v1"]["pct_peak"] == "–"
    assert beta["reduce_v2"]["check"] == "FAILED (7 cases)"
    assert beta["reduce_v2"]["pct_copy"] == "–"  # not recorded, not recomputed

    facts = sections["Test GPU Beta"]
    assert "– theoretical" in facts and "PyTorch –" in facts and "driver –" in facts
    assert "This run recorded no benchmark targets." in facts
    assert "✅" in sections["Test GPU Alpha"]


def test_two_gpus_get_their_own_charts(two_gpus):
    charts = B.svgs(two_gpus)
    assert set(charts) == {
        "assets/benchmarks/test-gpu-alpha-bandwidth.svg",
        "assets/benchmarks/test-gpu-alpha-compute.svg",
        "assets/benchmarks/test-gpu-beta-bandwidth.svg",
    }
    beta = charts["assets/benchmarks/test-gpu-beta-bandwidth.svg"].decode()
    assert "<!-- reduce_v2 -->" in beta and "theoretical" not in beta


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
    assert render._power_of_two_tex(2**28) == "$2^{28}$"
    assert render._power_of_two_tex(4096) == "4096"  # small sizes stay numbers
    assert render._power_of_two_tex(50257) == "50257"
