"""Fixtures of the CPU layer."""

import os

import pytest

from tests.helpers import require_tool
from thousand import cpu
from thousand.cuda import gpu_status, use_backend

# B13's Triton kernels run in Triton's interpreter in this layer. Triton reads the
# switch when it first decorates a function (its own tl.sum among them), so it is set
# before any test module, or torch, imports triton: but only where no GPU layer can
# share the process (the GPU run collects this folder too, and its Triton must
# compile for the GPU).
if os.environ.get("THOUSAND_BACKEND") == "cpu" or not gpu_status()[0]:
    os.environ.setdefault("TRITON_INTERPRET", "1")


@pytest.fixture(scope="module")
def cpu_backend_checked():
    """Launches in this module run on the CPU backend's checked build (needs g++)."""
    require_tool("g++")
    before = use_backend("cpu")
    with cpu.checked_mode():
        yield
    use_backend(before)


@pytest.fixture(scope="session")
def site_url() -> str:
    """Where the browser tests serve the site; the build must know it (sitemaps)."""
    from thousand.site.browser import free_port

    return f"http://127.0.0.1:{free_port()}/"


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, site_url):
    """Both languages built once (strict: any warning fails the build)."""
    from thousand.site.__main__ import build

    out = tmp_path_factory.mktemp("site")
    build(out, site_url=site_url)
    return out
