"""Two layers: the CPU layer always runs; the GPU layer (marker `gpu`) needs a GPU.

Without one, every GPU test is skipped and the run says so in one line, with the
reason. Nothing else is ever skipped silently.
"""

import pytest

from thousand.cuda import gpu_status

_GPU = {}


def gpu():
    if not _GPU:
        _GPU["ok"], _GPU["why"] = gpu_status()
    return _GPU["ok"], _GPU["why"]


def pytest_report_header(config):
    ok, why = gpu()
    return f"GPU layer: {'runs on ' + why if ok else 'skipped: ' + why}"


def pytest_collection_modifyitems(config, items):
    ok, why = gpu()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"no GPU: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter):
    ok, why = gpu()
    skipped = [
        r
        for r in terminalreporter.stats.get("skipped", [])
        if "gpu" in getattr(r, "keywords", {})
    ]
    if not ok and skipped:
        terminalreporter.write_line(
            f"GPU layer: {len(skipped)} tests skipped because {why}", yellow=True
        )
