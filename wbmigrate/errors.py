"""Typed errors of the library. The CLI turns each into a one-line `Error: ...` and an exit code.
`Level`: how much a finding of `check`, `verify` or mapping validation matters."""

from __future__ import annotations

import enum


class Level(enum.Enum):
    """How much a finding matters, as ruff and pint grade it: only errors and warnings fail."""

    ERROR = "error"  # check: an old name wbmigrate knows how to fix
    WARNING = "warning"  # an old name, or a file, that a person must look at; a deprecated key
    NOTE = "note"  # information: a name in a comment, docstring or prose


class WbmigrateError(Exception):
    """A problem the user can fix (a bad file, an unknown version); never a bug."""


def bug(exc: BaseException, on: str = "it", by: str = "wbmigrate", text: bool = False) -> str:
    """What is said of the one object or file wbmigrate failed on (a bug of ours: said for that
    one alone, and the others go on). `text`: the error's message too, not its type alone."""
    cause = f"{type(exc).__name__}: {exc}" if text else type(exc).__name__
    return f"{by} failed on {on} ({cause}); please report it"
