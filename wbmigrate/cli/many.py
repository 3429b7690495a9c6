"""`apply` and `rollback` over several projects: every project read (four at a time), one
question, one batch of writes across them (`--jobs` at a time), one backup set with a
sub-folder per project, and a report per project. A project that cannot be read is reported
and the others go on."""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from wbmigrate.cli.base import UserError, confirm_or_refuse, finish, status
from wbmigrate.cli.batch import shielded, stopping
from wbmigrate.cli.project import Connection, connect, live_selectors, progress
from wbmigrate.engine.model import Options
from wbmigrate.live.apply import Batch, Job, Outcome, apply_all, failed, restore_one, run_all
from wbmigrate.live.backup import Backup, BackupError, check_folder
from wbmigrate.live.census import cache_folder
from wbmigrate.live.org import (
    BackupSet,
    TargetError,
    default_set_folder,
    each_project,
    load_backup_set,
    resolve,
)
from wbmigrate.live.prepare import Work, prepare_apply, start_backup
from wbmigrate.live.project import Counts, Project, with_history
from wbmigrate.live.restore import Loaded, load_backup
from wbmigrate.mapping import Migration
from wbmigrate.plan_json import mapping_entry
from wbmigrate.report import live as live_report
from wbmigrate.report import plan as plan_report
from wbmigrate.report.words import printable

HEADINGS = {"apply": "Applied to", "rollback": "Rolled back"}


@dataclass(frozen=True)
class Prepared:
    """One project read and planned for apply."""

    project: Project
    options: Options
    work: Work
    found: Counts


@dataclass(frozen=True)
class Item:
    target: str
    task: Any  # a Job to apply, or a Restorable
    backup: Backup | None = None


def apply_many(
    targets: tuple[str, ...],
    migration: Migration,
    options: Options,
    backup_dir: str | None,
    yes: bool,
    jobs: int,
    format_: str,
    drafts: bool,
    runs: int,
    connection: Connection,
) -> None:
    selectors = live_selectors(targets)
    folder = Path(backup_dir) if backup_dir else default_set_folder("-".join(map(str, selectors)))
    try:
        check_folder(folder)
    except BackupError as exc:
        raise UserError(str(exc)) from None
    client = connect(connection)
    status(f"Reading {', '.join(map(str, selectors))} from {client.base_url} ...")
    try:
        projects = resolve(client, selectors)
    except TargetError as exc:
        raise UserError(str(exc)) from None
    cache = cache_folder(os.environ) if runs else None

    def prepare(entity: str, name: str) -> Prepared:
        project = Project(client, entity, name, drafts)
        own, problem = with_history(project, migration, options, runs, cache)
        if problem:
            status(f"Warning: {problem}")
        found = Counts()
        return Prepared(project, own, prepare_apply(project, migration, own, None, found), found)

    results = each_project(projects, prepare)
    unreadable = {r.target: str(r.error) for r in results if r.error is not None}
    ready: list[Prepared] = [r.value for r in results if r.error is None]
    for target, error in unreadable.items():
        status(f"{target}: could not be read ({error})")
    for prepared in ready:
        summary = plan_report.summary(prepared.work.tally).removeprefix("Summary: ")
        status(f"{prepared.project.target}: {summary}")
    writing = [p for p in ready if p.work.todo]
    total = sum(len(p.work.todo) for p in writing)
    settled = {p.project.target: list(p.work.settled) for p in ready}
    if not total:
        _report_set(format_, "apply", None, settled, unreadable)
        if format_ != "json":
            click.echo(f"Nothing to migrate in {len(ready)} projects.")
        finish(bool(unreadable) or failed(o for s in settled.values() for o in s))
        return
    confirm_or_refuse(f"Write {total} objects in {len(writing)} projects?", yes)
    info = {"base_url": client.base_url, **mapping_entry(migration, options)}
    backups = BackupSet(folder, info, [p.project.target for p in writing])
    for target, error in unreadable.items():
        backups.log(target, "not-read", reason=error)
    items = []
    for prepared in writing:
        target = prepared.project.target
        backup = start_backup(
            prepared.project, migration, prepared.options, backups.folder_of(target)
        )
        backups.log(target, "started", objects=len(prepared.work.todo))
        items += [Item(target, job, backup) for job in prepared.work.jobs(backup)]
    with progress(len(items), "Applying") as tick:
        batch = apply_all(client, [item.task for item in items], jobs, tick, stopping, status)
    with shielded():
        outcomes = _by_project(items, batch, settled)
        for item in {id(i.backup): i for i in items}.values():
            assert item.backup is not None
            note = item.backup.close()
            if note:
                status(f"Warning: {note}")
            backups.log(item.target, "ended", failed=failed(outcomes[item.target]))
        note = backups.close()
        if note:
            status(f"Warning: {note}")
        _report_set(format_, "apply", backups.folder, outcomes, unreadable, batch)
        _end(format_, batch, backups.folder, outcomes, unreadable, undo=True)


def rollback_set(
    folder: Path,
    only: Iterable[str],
    yes: bool,
    force: bool,
    jobs: int,
    format_: str,
    connection: Connection,
) -> None:
    """Restore the projects of a backup set (those in `only`, when given): every sub-backup
    is checked whole before anything is written."""
    try:
        chosen = load_backup_set(folder, only)
        loaded: dict[str, Loaded] = {t: load_backup(f) for t, f in chosen.folders.items()}
    except BackupError as exc:
        raise UserError(f"{exc}; nothing restored") from None
    for target, backup in loaded.items():
        for note in backup.notes:
            status(f"Warning: {target}: {note}")
    client = connect(connection)
    if chosen.manifest.get("base_url") != client.base_url:
        raise UserError(
            f"the backup is from {chosen.manifest.get('base_url')}, but the W&B host is "
            f"{client.base_url}"
        )
    status(f"Restoring {', '.join(loaded) or 'nothing'} on {client.base_url} ...")
    items = [Item(t, r) for t, backup in loaded.items() for r in backup.items]
    sent = sum(item.task.sent_sha256 is not None for item in items)
    confirm_or_refuse(f"Restore {sent} objects in {len(loaded)} projects?", yes)
    with progress(len(items), "Restoring") as tick:
        batch = run_all(
            items, lambda item: restore_one(client, item.task, force), jobs, tick, stopping
        )
    with shielded():
        outcomes = _by_project(items, batch, {t: [] for t in loaded})
        _report_set(format_, "rollback", folder, outcomes, {}, batch)
        _end(format_, batch, folder, outcomes, {}, undo=False)


def _by_project(
    items: list[Item], batch: Batch, outcomes: dict[str, list[Outcome]]
) -> dict[str, list[Outcome]]:
    """The batch's outcomes grouped by project, after the outcomes already known."""
    target_of = {_object_id(item.task): item.target for item in items}
    grouped = {target: list(known) for target, known in outcomes.items()}
    for outcome in batch.outcomes:
        grouped.setdefault(target_of[outcome.obj.id], []).append(outcome)
    return grouped


def _object_id(task: Any) -> str:
    return str(task.obj.id if isinstance(task, Job) else task.original.id)


def _report_set(
    format_: str,
    command: str,
    backup: Path | None,
    outcomes: dict[str, list[Outcome]],
    unreadable: dict[str, str],
    batch: Batch | None = None,
) -> None:
    if format_ == "json":
        text = live_report.to_json_set(command, backup, outcomes, unreadable, batch)
        click.echo(text, nl=False)
        return
    for target, done in outcomes.items():
        if done:  # a project with nothing to do has no table
            click.echo(live_report.to_text(done, f"{HEADINGS[command]} {target}"))
    for target, error in unreadable.items():
        click.echo(printable(f"{target}: not read ({error}); nothing written to it"))


def _end(
    format_: str,
    batch: Batch,
    folder: Path,
    outcomes: dict[str, list[Outcome]],
    unreadable: dict[str, str],
    undo: bool,
) -> None:
    """The lines after the reports (on stderr in json mode), then the exit code."""
    echo = status if format_ == "json" else click.echo
    if batch.interrupted:
        echo(live_report.interrupted(batch.not_started))
    if undo:
        command = f"wbmigrate rollback {shlex.quote(str(folder))} --yes"
        echo(f"Backups: {folder}  (undo: {command}; one project: add --project ENTITY/PROJECT)")
        everything = [o for done in outcomes.values() for o in done]
        conflicts = live_report.conflicts(everything, command)
        if conflicts:
            echo(conflicts)
    if batch.interrupted:
        finish(interrupted=True)
    finish(bool(unreadable) or failed(o for done in outcomes.values() for o in done))
