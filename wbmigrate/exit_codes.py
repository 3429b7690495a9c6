"""The process exit codes, named once, and the one function that turns a run's outcome into
one (black's `Report.return_code`; see "Exit codes" in docs/cli.md)."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    OK = 0
    FINDINGS = 1  # check: old names found; verify: something does not hold; plan/apply/rollback/
    # export: some objects failed or skipped
    ERROR = 2  # usage, mapping, auth or connection error (nothing written); check: wbmigrate
    # failed on a file (a bug, reported; every other file was checked)
    INTERRUPTED = 130  # Ctrl-C: writes in flight finished and are reported; the rest not started


class DetailedExitCode(enum.IntEnum):
    """The exit codes of `plan --detailed-exitcode`: terraform's contract, for CI."""

    NO_CHANGES = 0
    ERROR = 1  # any error: usage, mapping, auth, connection, an object that cannot be read
    CHANGES = 2  # planned, and something would change


def exit_code(
    failed: bool = False,
    changes: bool = False,
    error: bool = False,
    interrupted: bool = False,
    detailed: bool = False,
) -> int:
    """A run's exit code. The first that holds wins: interrupted (130); an error (2, or 1 under
    --detailed-exitcode); `failed`: some object or file failed, was skipped or has findings (1);
    `changes`: `plan --detailed-exitcode` would change something (2); else 0."""
    if interrupted:
        return ExitCode.INTERRUPTED
    if error:
        return DetailedExitCode.ERROR if detailed else ExitCode.ERROR
    if failed:
        return ExitCode.FINDINGS
    return DetailedExitCode.CHANGES if changes else ExitCode.OK
