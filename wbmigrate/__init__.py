"""wbmigrate: migrate W&B reports, workspaces and alerts when their metrics are renamed.

The library's entry points: `find_mapping` (a bundled mapping by id, or a mapping file) and
`WbmigrateError`, the base of every error a user can fix.
"""

from __future__ import annotations

from wbmigrate.errors import WbmigrateError
from wbmigrate.mapping.load import find_mapping

__version__ = "0.1.0"  # the package's version (pyproject reads it from here)

__all__ = ["WbmigrateError", "__version__", "find_mapping"]
