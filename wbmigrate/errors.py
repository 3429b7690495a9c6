"""Typed errors of the library. The CLI turns each into a one-line `Error: ...` and an exit code."""

from __future__ import annotations


class WbmigrateError(Exception):
    """A problem the user can fix (a bad file, an unknown version); never a bug."""
