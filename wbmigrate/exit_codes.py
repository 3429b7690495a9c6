"""The process exit codes, named once (see "Exit codes" in README.md)."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    OK = 0
    FINDINGS = (
        1  # check: old names found; plan/apply/rollback/export: some objects failed or skipped
    )
    ERROR = 2  # usage, mapping, auth or connection error: nothing was written
