"""wbmigrate: migrate W&B reports, workspaces and alerts when their metrics are renamed.

The library's entry point, `find_mapping`, loads the mapping code when first used (PEP 562),
so that the command line starts without it: a live plan sends its first request before the
mapping is read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wbmigrate.errors import WbmigrateError

if TYPE_CHECKING:
    from wbmigrate.mapping.load import find_mapping

__version__ = "0.1.0"  # the package's version (pyproject reads it from here)

__all__ = ["WbmigrateError", "__version__", "find_mapping"]


def __getattr__(name: str) -> Any:
    if name != "find_mapping":
        raise AttributeError(f"module 'wbmigrate' has no attribute {name!r}")
    from wbmigrate.mapping.load import find_mapping

    globals()[name] = find_mapping
    return find_mapping
