"""The process exit codes, named once (see "Exit codes" in README.md)."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    OK = 0
    FINDINGS = (
        1  # check: old names found; plan/apply/rollback/export: some objects failed or skipped
    )
    ERROR = 2  # usage, mapping, auth or connection error (nothing written); check: wbmigrate
    # failed on a file (a bug, reported; every other file was checked)
    INTERRUPTED = 130  # Ctrl-C: writes in flight finished and are reported; the rest not started
