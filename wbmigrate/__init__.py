"""wbmigrate: migrate W&B reports, workspaces and alerts when their metrics are renamed."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

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

try:
    __version__ = version("wbmigrate")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

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
