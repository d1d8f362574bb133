"""The column sums of B8 on the GPU at every K beyond the family's K = 16: v3's
remainder loop, each of v4's instances and its fallback loop; and the SASS that
the post reads, which needs cuobjdump, a part of every CUDA toolkit install there."""

import pytest

from tests.unroll_cases import ANY_K, COLUMNS, ROWS, check, check_sass

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("version", ANY_K, ids=lambda v: f"v{v}")
@pytest.mark.parametrize("k", ROWS)
def test_every_k(version, k, record_property):
    record_property("kernel", f"unroll_v{version}")
    record_property("size", [k, COLUMNS[-1]])
    record_property("block", f"K = {k}, default block")  # the ledger's case key
    for n in COLUMNS:
        check(version, k, n)


def test_sass_of_unroll_cu():
    """The GPU machine has cuobjdump (the b8 snippets need it): no skip here."""
    check_sass()
