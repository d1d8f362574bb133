"""Helpers shared by both test layers."""

import os
import shutil

import pytest


def require_tool(name: str) -> str:
    """A tool the test needs: skip where it is missing, fail where CI=true."""
    path = shutil.which(name)
    if path:
        return path
    if os.environ.get("CI") == "true":
        pytest.fail(f"{name} is not installed, and CI=true does not allow skipping it")
    pytest.skip(f"{name} is not installed")
