"""How a batch of writes ends on the command line: a Ctrl-C before the writes is one line; during
them the batch stops, the outcome table is printed (shielded from a second Ctrl-C), then how
much was left, the undo command and the exit code (130 when interrupted)."""

from __future__ import annotations

import shlex
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from wbmigrate.cli.base import finish, status
from wbmigrate.live.apply import Batch, failed
from wbmigrate.report import live as live_report


def stopping() -> None:
    status("Interrupted: no new object is started; waiting for the writes in flight ...")


@contextmanager
def shielded() -> Iterator[None]:
    """Once the writes are over, a Ctrl-C waits until their outcome is printed: that table
    (and the undo command) is the record of what was written."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def end_batch(batch: Batch) -> None:
    """After the table: a batch stopped by Ctrl-C says how much was left, and exits 130."""
    if batch.interrupted:
        click.echo(live_report.interrupted(batch.not_started))
        finish(interrupted=True)


def end_batch_with_undo(batch: Batch, results: list[Any], folder: Path) -> None:
    """The backup folder and the exact command that undoes the run, then the exit code."""
    undo = f"wbmigrate rollback {shlex.quote(str(folder))} --yes"
    if batch.interrupted:
        click.echo(live_report.interrupted(batch.not_started))
    click.echo(f"Backups: {folder}  (undo: {undo})")
    conflicts = live_report.conflicts(results, undo)
    if conflicts:
        click.echo(conflicts)
    if batch.interrupted:
        finish(interrupted=True)
    finish(failed(results))
