"""Fixtures of the CPU layer."""

import pytest

from tests.helpers import require_tool
from thousand import cpu
from thousand.cuda import use_backend


@pytest.fixture(scope="module")
def cpu_backend_checked():
    """Launches in this module run on the CPU backend's checked build (needs g++)."""
    require_tool("g++")
    before = use_backend("cpu")
    with cpu.checked_mode():
        yield
    use_backend(before)
