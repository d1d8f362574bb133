"""Kernel families: `<op>.cu` (the CUDA C) beside `<op>.py` (reference, launchers,
metadata)."""

from .family import Family, Version, all_families, rel_error

__all__ = ["Family", "Version", "all_families", "rel_error"]
