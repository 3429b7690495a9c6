"""`wbmigrate apply`: write a migration to one live project or to several."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from wbmigrate.cli.base import (
    UserError,
    asks,
    confirm_or_refuse,
    examples,
    finish,
    interruptible,
    status,
)
from wbmigrate.cli.options import (
    FORMAT,
    Connection,
    connection_options,
    flag,
    live_options,
    migration_options,
    migration_setup,
    quiet_flag,
)
from wbmigrate.cli.project import (
    find_projects,
    live_targets,
    one_project,
    open_project,
    read_history,
    tell_found,
)
from wbmigrate.cli.writes import apply_projects, report
from wbmigrate.engine.model import Options
from wbmigrate.live import planfile
from wbmigrate.live.backup import safe_name
from wbmigrate.live.census import cache_folder
from wbmigrate.live.org import Prepared, prepare_projects
from wbmigrate.live.outcomes import failed
from wbmigrate.live.prepare import backup_folder, prepare_apply
from wbmigrate.live.project import Counts, Selector, selector
from wbmigrate.mapping import Migration
from wbmigrate.mapping.load import find_mapping
from wbmigrate.plan import Plan
from wbmigrate.redact import printable
from wbmigrate.report import plan as plan_report
from wbmigrate.report.words import plural


@click.command(
    epilog=examples(
        "wbmigrate apply my-team/my-project --yes",
        "wbmigrate apply plan.json                    # a plan saved by `plan --out`",
        "wbmigrate apply my-team/my-project --mode replace --jobs 8 --backup-dir backups/ --yes",
        "wbmigrate apply my-team --yes                # every project the key can see",
    ),
)
@click.argument("targets", metavar="TARGET...", nargs=-1)
@migration_options
@click.option(
    "--plan",
    "plan_path",
    type=click.Path(exists=True, dir_okay=False),
    metavar="PLAN.json",
    help="Apply exactly this saved plan (see `plan --out`); objects changed since are skipped.",
)
@click.option(
    "--backup-dir",
    type=click.Path(),
    metavar="DIR",
    help="Where to back up the originals (default: wbmigrate-backups/ENTITY-PROJECT-TIME).",
)
@flag("--yes", "-y", "Write without asking.")
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1, 32),
    default=4,
    help="Objects written at once.",
)
@FORMAT
@live_options
@flag("--verbose", "-v", "At the question, also show unchanged objects and info notes.")
@quiet_flag(
    "As ruff's -q: only warnings and errors on stderr (no progress, status or summary "
    "lines). The plan at the question, the outcome table and the backup line stay: they are "
    "what you approve and the record of what was written.",
)
@connection_options
@interruptible("nothing written")
def apply(
    targets: tuple[str, ...],
    plan_path: str | None,
    backup_dir: str | None,
    yes: bool,
    jobs: int,
    format_: str,
    drafts: str,
    runs: int,
    verbose: bool,
    connection: Connection,
    **setup: Any,
) -> None:
    """Migrate a live W&B project: rewrite its reports, drafts, workspaces and alerts.

    Without --yes, at a terminal, the plan is shown first (each object to change, as `plan`
    shows it) and you are asked; without a terminal, nothing is written. Each original is
    backed up first (files of mode 0600 in a 0700 folder, with a checksummed journal); then
    the object is read again and written at once only if it is still as planned (else
    skipped), and read back: if someone saved it meanwhile it is a conflict, and their version
    is kept in the backup too. One failing object never stops the others; Ctrl-C starts no new
    object, lets the writes in flight finish and reports them. Undo with
    `wbmigrate rollback BACKUP_DIR`.

    TARGET may be a plan saved by `plan --out` (as terraform's `apply PLANFILE`): that plan
    is applied to its own project, in its mode and with its options (a plan made on another
    host than the one configured is refused); the same as `apply --plan PLAN.json`.

    Exit code: 0 when every object was migrated or needed nothing, 1 when some were skipped,
    in conflict or failed (or you answered no), 2 on a usage, mapping, auth or connection error
    or an unusable --backup-dir (nothing written), 130 after Ctrl-C. `--format json` prints
    the result as a document (also when there is nothing to migrate, or after Ctrl-C mid-batch).

    Several projects at once: TARGET may be ENTITY (every project the key can see), a glob
    (`team/qwen3-*`), or several of these and ENTITY/PROJECTs. Every project is read first and
    one question asked for all; the writes share --jobs; one backup folder holds a sub-folder
    per project and a journal of the run (default: wbmigrate-backups/TARGETS-TIME). A project
    that cannot be read is reported (exit 1) and the others are migrated.
    """
    if plan_path is None and len(targets) == 1 and Path(targets[0]).is_file():
        plan_path, targets = targets[0], ()  # terraform's `apply PLANFILE`
    chosen = live_targets(targets) if targets else None  # refused before any plan is read
    saved = planfile.load_plan(Path(plan_path)) if plan_path else None
    selectors = chosen or _targets(saved)
    live = one_project(selectors)
    if live is None:
        if saved is not None:
            raise UserError("--plan applies one project's saved plan: give one ENTITY/PROJECT")
        migration, options = migration_setup(**setup)
        many = Many(backup_dir, yes, jobs, format_, drafts == "migrate", runs, connection, verbose)
        apply_many(selectors, migration, options, many)
        return
    folder = backup_folder("-".join(live), backup_dir)
    migration, options = migration_setup(**setup)
    if saved is not None:
        migration = planfile.saved_migration(
            saved, find_mapping(setup["mapping_ref"]), "/".join(live)
        )
        context, given = click.get_current_context(), click.core.ParameterSource.COMMANDLINE
        named = {name for name in context.params if context.get_parameter_source(name) is given}
        planfile.check_options(saved, options, drafts == "migrate", named)
        options, drafts = saved.options, "migrate" if saved.drafts else "skip"
    project = open_project(live, drafts == "migrate", connection)
    if saved is not None:
        planfile.check_host(saved, project.client.base_url)
    counts = Counts()
    objects = project.read(counts)
    if saved is None:  # a saved plan carries the census it was made with
        options, _ = read_history(project, migration, options, runs)
    shown = asks(yes) and saved is None  # a saved plan shows what was saved
    work = prepare_apply(project, migration, options, saved, counts, objects, shown)
    tell_found(counts, project.drafts)
    if not work.todo:
        if work.settled or format_ == "json":  # a document even when there is nothing to do
            report(format_, "apply", {project.target: work.settled})
            finish(failed(work.settled))
        click.echo(f"Nothing to migrate in {project.target}.", err=format_ == "json")
        return
    question = f"Write {plural(len(work.todo), 'object')} in {project.target}?"
    # the plan as `plan` shows it; a saved one as `show` does: what was saved is what is applied
    planned = tuple(work.planned or ())
    whole = planfile.saved_report(saved) if saved else Plan(migration, options, planned)
    if not asks(yes):  # the plan shown at the question ends with this summary
        status(plan_report.summary(whole.tally if saved else work.tally))
    chunks = plan_report.text_chunks(whole.migration, whole.options, whole.objects, verbose)
    confirm_or_refuse(question, yes, chunks)
    ready = [Prepared(project, options, work)]
    apply_projects(project.client, ready, migration, jobs, format_, folder)


def _targets(saved: planfile.SavedPlan | None) -> list[Selector]:
    """With no TARGET, the project of the saved plan."""
    if saved is None:  # as click says it of a required argument
        raise click.UsageError("Missing argument 'TARGET...'.", click.get_current_context())
    found = selector(saved.target)
    if found is None:
        raise UserError(f"the saved plan names no ENTITY/PROJECT: {printable(saved.target)}")
    return [found]


@dataclass(frozen=True)
class Many:
    """What `apply` of several projects takes beyond the migration."""

    backup_dir: str | None
    yes: bool
    jobs: int
    format_: str
    drafts: bool
    runs: int
    connection: Connection
    verbose: bool = False


def apply_many(
    selectors: list[Selector], migration: Migration, options: Options, many: Many
) -> None:
    """Every project read (four at a time), one question, one batch of writes across them
    (`--jobs` at a time), one backup set with a sub-folder per project, and a report per
    project. A project that cannot be read is reported and the others go on."""
    folder = backup_folder(safe_name("-".join(map(str, selectors))), many.backup_dir)
    client, projects = find_projects(selectors, many.connection)
    cache = cache_folder(os.environ) if many.runs else None
    results = prepare_projects(
        client, projects, migration, options, many.drafts, many.runs, cache, status, asks(many.yes)
    )
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
        report(many.format_, "apply", settled, unreadable=unreadable, one=False)
        if many.format_ != "json":
            click.echo(f"Nothing to migrate in {plural(len(ready), 'project')}.")
        finish(bool(unreadable) or failed(o for s in settled.values() for o in s))
        return
    plans = _plans(ready, migration, many.verbose)
    question = f"Write {plural(total, 'object')} in {plural(len(writing), 'project')}?"
    confirm_or_refuse(question, many.yes, plans)
    apply_projects(client, ready, migration, many.jobs, many.format_, folder, unreadable)


def _plans(ready: list[Prepared], migration: Migration, verbose: bool) -> Iterator[str]:
    """The plan of each project with something to write, as `plan` shows it, under its name."""
    for prepared in (p for p in ready if p.work.todo):
        yield plan_report.printed([f"== {prepared.project.target}"])
        planned = prepared.work.planned or ()
        yield from plan_report.text_chunks(migration, prepared.options, planned, verbose)
