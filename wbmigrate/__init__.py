"""wbmigrate: migrate W&B reports, workspaces and alerts when their metrics are renamed.

The library's names load the mapping code when first used (PEP 562), so that the command line
starts without it: a live plan sends its first request before the mapping is read.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wbmigrate.errors import WbmigrateError
    from wbmigrate.mapping import (
        Action,
        Mapping,
        MappingError,
        Migration,
        Resolution,
        find_mapping,
        load_mapping,
    )

__version__ = "0.1.0"  # the package's version (pyproject reads it from here)

__all__ = [
    "Action",
    "Mapping",
    "MappingError",
    "Migration",
    "Resolution",
    "WbmigrateError",
    "__version__",
    "find_mapping",
    "load_mapping",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'wbmigrate' has no attribute {name!r}")
    module = "wbmigrate.errors" if name == "WbmigrateError" else "wbmigrate.mapping"
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
