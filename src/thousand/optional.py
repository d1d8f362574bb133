"""Packages that only some of the package's programs need, imported with an error
that says how to install them: the base install runs every kernel, and
`pip install "thousand-points[snippets]"` adds what every snippet needs."""

from __future__ import annotations

import importlib

# the install command (from a clone of the repository: pip install -e ".[snippets]")
EXTRA = "pip install 'thousand-points[snippets]'"
HOW = {
    "sklearn": "scikit-learn, for its handwritten digits",
    "torch": "PyTorch, for the models' twins (without a GPU, its CPU build is enough: "
    "pip install torch --index-url https://download.pytorch.org/whl/cpu)",
    "triton": "Triton (pip install triton; off a GPU its interpreter runs the kernels)",
}


def require(module: str, who: str):
    """The module, or ModuleNotFoundError naming who needs it and the install."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name != module.split(".")[0]:
            raise  # the package is there but something it imports is not
        raise ModuleNotFoundError(
            f"{who} needs {HOW.get(module, module)}: {EXTRA}", name=module
        ) from e
