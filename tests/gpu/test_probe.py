"""The CUDA semantics the CPU backend is tested against hold on the real GPU too:
the same kernels (tests/kernels/probe.cu) and the same expected values."""

import pytest

from tests.probe_checks import SEMANTICS

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("check", SEMANTICS.values(), ids=SEMANTICS.keys())
def test_semantics_on_the_gpu(check):
    check()
