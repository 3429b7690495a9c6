"""wbmigrate: migrate W&B reports, workspaces and alerts when their metrics are renamed."""

from __future__ import annotations

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
