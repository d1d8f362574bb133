"""A snippet that needs a package the base install lacks stops with the package's
name and the pip command that installs it, not a bare ModuleNotFoundError."""

import sys

import pytest

from thousand.optional import EXTRA, require


def test_a_missing_package_is_named_with_its_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)  # import sklearn now fails
    from thousand.models import data

    with pytest.raises(ModuleNotFoundError) as e:
        data.digits()
    assert "scikit-learn" in str(e.value) and EXTRA in str(e.value)
    assert e.value.name == "sklearn"


def test_torch_missing_says_how_to_get_the_cpu_build(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ModuleNotFoundError, match="download.pytorch.org/whl/cpu"):
        require("torch", "a twin")


def test_a_package_that_is_there_is_returned():
    assert require("numpy", "anything").__name__ == "numpy"
