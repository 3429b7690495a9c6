"""How `apply` and `rollback` run their writes on the command line, over one project or many
(one is a set of one; only its report's layout differs): the progress; a Ctrl-C during the
writes stops the batch, the outcome tables are printed (shielded from a second Ctrl-C), then how
much was left, the undo command and the exit code (130 when interrupted)."""

from __future__ import annotations

import shlex
import signal
from contextlib import AbstractContextManager
from pathlib import Path

import click

from wbmigrate.cli.base import finish, status
from wbmigrate.cli.project import progress
from wbmigrate.live.backup import Backup, BackupSet
from wbmigrate.live.batches import apply_all
from wbmigrate.live.client import Client
from wbmigrate.live.org import Prepared
from wbmigrate.live.outcomes import Batch, Outcome, Queued, failed
from wbmigrate.live.prepare import start_backup
from wbmigrate.live.restore import Loaded, restore_one
from wbmigrate.live.run import on_ctrl_c, run_all
from wbmigrate.mapping import Migration
from wbmigrate.plan_json import mapping_entry
from wbmigrate.redact import printable
from wbmigrate.report import live as live_report

HEADINGS = {"apply": "Applied to", "rollback": "Rolled back"}

Outcomes = dict[str, list[Outcome]]  # by project


def stopping() -> None:
    status("Interrupted: no new object is started; waiting for the writes in flight ...")


def shielded() -> AbstractContextManager[None]:
    """Once the writes are over, a Ctrl-C waits until their outcome is printed: that table
    (and the undo command) is the record of what was written."""
    return on_ctrl_c(signal.SIG_IGN)


def apply_projects(
    client: Client,
    ready: list[Prepared],
    migration: Migration,
    jobs: int,
    format_: str,
    folder: Path,
    unreadable: dict[str, str] | None = None,
) -> None:
    """Back up and write the objects of every project in one batch, then report each. One
    project (`unreadable` None) is backed up in `folder`; several in a backup set there, a
    sub-folder per project, whose journal also names each project that could not be read."""
    backups = None
    if unreadable is not None:  # the set's mode is the projects' one mode
        info = {"base_url": client.base_url, **mapping_entry(migration, ready[0].options)}
        backups = BackupSet(folder, info, [p.project.target for p in ready if p.work.todo])
        for target, error in unreadable.items():
            backups.log(target, "not-read", reason=error)
    started: dict[str, Backup] = {}
    work: list[Queued] = []
    target_of: dict[str, str] = {}  # an object's id -> its project
    for prepared in (p for p in ready if p.work.todo):
        target = prepared.project.target
        place = folder if backups is None else backups.folder_of(target)
        started[target] = start_backup(prepared.project, migration, prepared.options, place)
        if backups is not None:
            backups.log(target, "started", objects=len(prepared.work.todo))
        work += prepared.work.jobs(started[target])
        target_of.update((queued.id, target) for queued in prepared.work.todo)
    with progress(len(work), "Applying") as tick:
        batch = apply_all(client, work, jobs, tick, stopping, status)
    with shielded():
        outcomes = _by_project({p.project.target: p.work.settled for p in ready}, target_of, batch)
        for target, backup in started.items():
            closed = backup.close()
            _warn(closed)
            if backups is not None:  # where the sub-backup ends, so a cut one is refused
                end = None if closed else backup.end
                backups.log(target, "ended", failed=failed(outcomes[target]), journal=end)
        if backups is not None:
            _warn(backups.close())
        conclude(format_, "apply", outcomes, folder, batch, unreadable or {}, one=backups is None)


def restore_projects(
    client: Client,
    loaded: dict[str, Loaded],
    folder: Path,
    force: bool,
    jobs: int,
    format_: str,
    one: bool,
) -> None:
    """Put back the objects of every backup in `loaded` (by project), then report each."""
    items = [item for backup in loaded.values() for item in backup.items]
    with progress(len(items), "Restoring") as tick:
        batch = run_all(items, lambda item: restore_one(client, item, force), jobs, tick, stopping)
    with shielded():
        target_of = {i.original.id: t for t, backup in loaded.items() for i in backup.items}
        outcomes = _by_project({target: [] for target in loaded}, target_of, batch)
        conclude(format_, "rollback", outcomes, folder, batch, {}, one=one)


def _by_project(known: Outcomes, target_of: dict[str, str], batch: Batch) -> Outcomes:
    """The batch's outcomes grouped by project (`target_of` an object's id), after the
    outcomes already known."""
    grouped = {target: list(done) for target, done in known.items()}
    for outcome in batch.outcomes:
        grouped[target_of[outcome.obj.id]].append(outcome)
    return grouped


def _warn(note: str | None) -> None:
    if note:
        status(f"Warning: {note}")


def report(
    format_: str,
    command: str,
    outcomes: Outcomes,
    backup: Path | None = None,
    batch: Batch | None = None,
    unreadable: dict[str, str] | None = None,
    one: bool = True,
) -> None:
    """The outcome table of each project on stdout (one project: even an empty one); in json
    mode the result document instead (of one project: `wbmigrate-result/1`)."""
    unreadable = unreadable or {}
    if format_ == "json":
        text = live_report.to_json(command, backup, outcomes, unreadable, batch or Batch(), one)
        click.echo(text, nl=False)
        return
    for target, done in outcomes.items():
        if done or one:  # of several projects, one with nothing to do has no table
            click.echo(live_report.to_text(done, f"{HEADINGS[command]} {target}"))
    for target, error in unreadable.items():
        click.echo(printable(f"{target}: not read ({error}); nothing written to it"))


def conclude(
    format_: str,
    command: str,
    outcomes: Outcomes,
    folder: Path,
    batch: Batch,
    unreadable: dict[str, str],
    one: bool,
) -> None:
    """The report, the lines after it (on stderr in json mode: stdout holds the document
    alone), then the exit code."""
    report(format_, command, outcomes, folder, batch, unreadable, one)
    echo = status if format_ == "json" else click.echo
    if batch.interrupted:
        echo(live_report.interrupted(batch.not_started))
    everything = [o for done in outcomes.values() for o in done]
    if command == "apply":
        undo = f"wbmigrate rollback {shlex.quote(str(folder))} --yes"
        hint = "" if one else "; one project: add --project ENTITY/PROJECT"
        echo(f"Backups: {folder}  (undo: {undo}{hint})")
        conflicts = live_report.conflicts(everything, undo)
        if conflicts:
            echo(conflicts)
    finish(bool(unreadable) or failed(everything), interrupted=batch.interrupted)
