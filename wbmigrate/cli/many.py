"""`apply` over several projects: every project read (four at a time), one question, one batch
of writes across them (`--jobs` at a time, `cli.batch`), one backup set with a sub-folder per
project, and a report per project. A project that cannot be read is reported and the others go
on."""

from __future__ import annotations

import os
from pathlib import Path

import click

from wbmigrate.cli.base import UserError, confirm_or_refuse, finish, status
from wbmigrate.cli.batch import apply_projects, report
from wbmigrate.cli.project import Connection, connect, live_selectors
from wbmigrate.engine.model import Options
from wbmigrate.live.backup import BackupError, BackupSet, check_folder, default_folder, safe_name
from wbmigrate.live.census import cache_folder
from wbmigrate.live.org import (
    Prepared,
    TargetError,
    prepare_projects,
    resolve,
)
from wbmigrate.live.outcomes import failed
from wbmigrate.mapping import Migration
from wbmigrate.plan_json import mapping_entry
from wbmigrate.report import plan as plan_report


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
    label = safe_name("-".join(map(str, selectors)))
    folder = Path(backup_dir) if backup_dir else default_folder(label)
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
    results = prepare_projects(client, projects, migration, options, drafts, runs, cache, status)
    unreadable = {r.target: str(r.error) for r in results if r.error is not None}
    ready: list[Prepared] = [r.value for r in results if r.error is None]
    for target, error in unreadable.items():
        status(f"{target}: could not be read ({error})")
    for prepared in ready:
        summary = plan_report.summary(prepared.work.tally).removeprefix("Summary: ")
        status(f"{prepared.project.target}: {summary}")
    writing = [p.project.target for p in ready if p.work.todo]
    total = sum(len(p.work.todo) for p in ready)
    if not total:
        settled = {p.project.target: list(p.work.settled) for p in ready}
        report(format_, "apply", settled, unreadable=unreadable, one=False)
        if format_ != "json":
            click.echo(f"Nothing to migrate in {len(ready)} projects.")
        finish(bool(unreadable) or failed(o for s in settled.values() for o in s))
        return
    confirm_or_refuse(f"Write {total} objects in {len(writing)} projects?", yes)
    info = {"base_url": client.base_url, **mapping_entry(migration, options)}
    backups = BackupSet(folder, info, writing)
    for target, error in unreadable.items():
        backups.log(target, "not-read", reason=error)
    apply_projects(client, ready, migration, jobs, format_, folder, backups, unreadable)
