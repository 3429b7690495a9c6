"""`plan` of live projects: one (streamed as it is read) or many (a table, then each one).
Loaded only when `plan` is given no existing path, so a plan of files never loads the live
side."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from wbmigrate.cli.base import UserError, print_plan, status
from wbmigrate.cli.options import Connection, migration_setup
from wbmigrate.cli.project import (
    find_projects,
    live_targets,
    one_project,
    open_project,
    read_history,
    tell_found,
)
from wbmigrate.engine.model import Options
from wbmigrate.errors import WbmigrateError
from wbmigrate.live.census import cache_folder
from wbmigrate.live.org import plan_projects
from wbmigrate.live.project import Counts, Selector, plan_project, walking
from wbmigrate.mapping import Migration
from wbmigrate.plan import Status, Tally
from wbmigrate.redact import printable
from wbmigrate.report import live as live_report
from wbmigrate.report import org as org_report
from wbmigrate.report.words import plural


@dataclass(frozen=True)
class Live:
    """What `plan` of a live project takes beyond the migration: where to save the plan,
    drafts or not, how many runs the census reads, how to connect."""

    out: str | None
    drafts: bool
    runs: int
    connection: Connection


def plan_live(
    targets: tuple[str, ...],
    setup: dict[str, Any],
    format_: str,
    verbose: bool,
    live: Live,
) -> Tally:
    """The plan of one live project, or of the many the TARGETs name (`setup`: the migration
    options)."""
    selectors = live_targets(targets, files_too=True)
    target = one_project(selectors)
    if target is None:
        if live.out:
            raise UserError("--out saves one project's plan: give one ENTITY/PROJECT")
        return _plan_many(targets, selectors, *migration_setup(**setup), format_, verbose, live)
    if live.out and not Path(live.out).resolve().parent.is_dir():
        raise UserError(f"--out {printable(live.out)}: no such folder; nothing read")
    saved = Path(live.out) if live.out else None
    project = open_project(target, live.drafts, live.connection)
    migration, options = migration_setup(**setup)
    counts, tally = Counts(), Tally()
    # its objects are read and walked while the census is
    objects = walking(project.read(counts), migration, options, project.client.base_url)
    options, objects = read_history(project, migration, options, live.runs, objects)
    planned = plan_project(project, migration, options, counts, saved, objects)
    print_plan(format_, migration, options, verbose, map(tally.add, planned))
    tell_found(counts, project.drafts)
    if saved:
        status(f"Plan saved to {live.out}.")
    return tally


def _plan_many(
    targets: tuple[str, ...],
    selectors: list[Selector],
    migration: Migration,
    options: Options,
    format_: str,
    verbose: bool,
    live: Live,
) -> Tally:
    """Every project the TARGETs name: the table, then each project's details. A project
    that could not be read counts as an object that could not be (exit 1)."""
    alone = len(targets) == 1 and "/" not in targets[0]  # or a folder's name, mistyped
    try:
        client, projects = find_projects(selectors, live.connection)
    except (WbmigrateError, click.ClickException) as exc:
        text = exc.format_message() if isinstance(exc, click.ClickException) else str(exc)
        hint = f" ({printable(targets[0])} is no file or folder either)" if alone else ""
        raise UserError(f"{text}{hint}") from None
    status(f"Planning {plural(len(projects), 'project')} ...")
    results = plan_projects(
        client,
        projects,
        migration,
        options,
        org_report.renderer(format_, verbose),
        live.drafts,
        live.runs,
        cache_folder(os.environ) if live.runs else None,
    )
    chunks = {
        "text": org_report.text_chunks,
        "markdown": org_report.markdown_chunks,
        "json": org_report.json_chunks,
    }[format_]
    for piece in chunks(migration, options, results):
        click.echo(piece, nl=False)
    tally = Tally()
    for result in results:
        if result.error is not None:
            status(f"{result.target}: could not be read ({result.error})")
            tally.statuses[Status.ERROR] += 1
            continue
        tally.merge(result.value.tally)
        status(f"{result.target}: {live_report.found_line(result.value.found)}")
        if result.value.problem:
            status(f"Warning: {result.value.problem}")
    return tally
