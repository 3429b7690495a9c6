"""`wbmigrate plan | apply | rollback | export`: files on disk and live W&B projects."""

from __future__ import annotations

import datetime as dt
import itertools
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from wbmigrate import __version__
from wbmigrate.cli.base import (
    CONTEXT,
    UserError,
    cli,
    confirm_or_refuse,
    connect,
    connection_options,
    examples,
    exit_with,
    migration_options,
    migration_setup,
    status,
)
from wbmigrate.engine.model import Options
from wbmigrate.exit_codes import ExitCode
from wbmigrate.files import read_sources
from wbmigrate.live.apply import Expected, Outcome, apply_one, restore_one, run_all
from wbmigrate.live.apply import Status as Done
from wbmigrate.live.backup import Backup, load_backup
from wbmigrate.live.client import Client
from wbmigrate.live.export import export_objects
from wbmigrate.live.objects import LiveObject, fetch_project, parse_target
from wbmigrate.live.planfile import PlanFile, check_plan, load_plan
from wbmigrate.mapping import find_mapping
from wbmigrate.plan import Plan, Planned, Status, Tally, make_plan, plan_each, plan_one
from wbmigrate.report import outcomes as outcome_report
from wbmigrate.report import plan as plan_report

FORMATS = click.Choice(["text", "markdown", "json"])
DRAFTS = click.option(
    "--drafts",
    type=click.Choice(["migrate", "skip"]),
    default="migrate",
    show_default=True,
    help="Report drafts: migrate them too (a stale draft would undo the "
    "migration when published), or leave them.",
)


def _fetch(client: Client, entity: str, project: str, drafts: bool) -> list[LiveObject]:
    found = _Found(entity, project, client, drafts)
    objects = [found.add(o) for o in fetch_project(client, entity, project, drafts=drafts)]
    found.done()
    return objects


class _Found:
    """What a project held, told on stderr once it has all been read."""

    def __init__(self, entity: str, project: str, client: Client, drafts: bool) -> None:
        self.drafts = drafts
        self.count = {"report": 0, "workspace": 0, "automation": 0, "draft": 0}
        status(f"Reading {entity}/{project} from {client.base_url} ...")

    def add(self, obj: LiveObject) -> LiveObject:
        self.count[obj.kind] += 1
        self.count["draft"] += obj.is_draft
        return obj

    def done(self) -> None:
        count = self.count
        status(
            f"Found {_n(count['report'], 'report')} ({_n(count['draft'], 'draft')}), "
            f"{_n(count['workspace'], 'saved workspace')}, "
            f"{_n(count['automation'], 'automation')}."
        )
        if not self.drafts:
            status(
                "Warning: drafts are skipped; "
                "publishing a stale draft undoes its report's migration."
            )


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _live_target(target: str, files_too: bool = False) -> tuple[str, str]:
    live = parse_target(target)
    if live is None:
        also = "no such file or folder, and " if files_too else ""
        raise UserError(f"{target}: {also}not ENTITY/PROJECT")
    return live


# --- plan -------------------------------------------------------------------------------------


@cli.command(
    context_settings=CONTEXT,
    epilog=examples(
        "wbmigrate plan fixtures/demo-project",
        "wbmigrate plan my-team/my-project --out plan.json",
        "wbmigrate plan dashboards/ --mode replace --format markdown > plan.md",
        "wbmigrate plan report.json --to 2026.08.21 --format json",
    ),
)
@click.argument("target", metavar="TARGET")
@migration_options
@click.option("--format", "format_", type=FORMATS, default="text", show_default=True)
@click.option("--verbose", "-v", is_flag=True, help="Also show unchanged objects and info notes.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, writable=True),
    metavar="PLAN.json",
    help="Save the exact changes and each object's fingerprint, for `apply --plan`.",
)
@DRAFTS
@connection_options
def plan(
    target: str,
    format_: str,
    verbose: bool,
    out: str | None,
    drafts: str,
    allow_http: bool,
    timeout: float,
    retries: int,
    **setup: Any,
) -> None:
    """Show what migrating TARGET would change, and write nothing to it.

    TARGET is ENTITY/PROJECT (or wandb://ENTITY/PROJECT) for a live W&B project: its published
    reports, report drafts, saved workspaces and automations. Or it is a folder of spec files
    (view specs, saved triggers or `wbmigrate export` files, as JSON) or one such file; an
    existing path wins over ENTITY/PROJECT.

    Every affected panel, run set and alert is listed with what changes, what is removed and
    what needs a person's review. Exit code: 0 when every object was planned, 1 when some could
    not be read, 2 on a usage, mapping, auth or connection error.
    """
    migration, options = migration_setup(**setup)
    chunks: Callable[[Iterable[Planned]], Iterator[str]] = {
        "text": lambda objs: plan_report.text_chunks(migration, options, objs, verbose),
        "markdown": lambda objs: plan_report.markdown_chunks(migration, options, objs, verbose),
        "json": lambda objs: plan_report.json_chunks(migration, options, objs),
    }[format_]
    tally = Tally()
    path = Path(target)
    if path.exists():
        if out:
            raise UserError("--out saves a plan for `apply`, which needs a live ENTITY/PROJECT")
        _print(chunks(map(tally.add, plan_each(read_sources(path), migration, options))))
    else:
        entity, project = _live_target(target, files_too=True)
        client = connect(allow_http, timeout, retries)
        found = _Found(entity, project, client, drafts == "migrate")
        saved = (
            PlanFile(Path(out), migration, options, f"{entity}/{project}", drafts == "migrate")
            if out
            else None
        )

        def planned() -> Iterator[Planned]:
            """Each object planned as it arrives, written to the plan file, then let go."""
            for obj in fetch_project(client, entity, project, drafts=drafts == "migrate"):
                result = tally.add(plan_one(found.add(obj).source(), migration, options))
                if saved is not None:
                    saved.add(result, obj)
                yield result

        try:
            _print(chunks(planned()))
        except BaseException:
            if saved is not None:
                saved.discard()
            raise
        found.done()
        if saved is not None:
            saved.close()
            status(f"Plan saved to {out}.")
    if tally.statuses[Status.ERROR]:
        exit_with(ExitCode.FINDINGS)


def _print(chunks: Iterator[str]) -> None:
    """Stream a report to stdout, from its first object on: an error reading the target (an
    unknown project, a refused key) then comes before any output."""
    pieces = list(itertools.islice(chunks, 2))  # the heading, then the first object's piece
    for piece in itertools.chain(pieces, chunks):
        click.echo(piece, nl=False)


# --- apply ------------------------------------------------------------------------------------


@cli.command(
    context_settings=CONTEXT,
    epilog=examples(
        "wbmigrate apply my-team/my-project --yes",
        "wbmigrate apply my-team/my-project --plan plan.json --yes",
        "wbmigrate apply my-team/my-project --mode replace --jobs 8 --backup-dir backups/ --yes",
    ),
)
@click.argument("target", metavar="ENTITY/PROJECT")
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
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="Where to back up the originals (default: wbmigrate-backups/ENTITY-PROJECT-TIME).",
)
@click.option("--yes", "-y", is_flag=True, help="Write without asking.")
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1, 32),
    default=4,
    show_default=True,
    help="Objects written at once.",
)
@DRAFTS
@connection_options
def apply(
    target: str,
    plan_path: str | None,
    backup_dir: str | None,
    yes: bool,
    jobs: int,
    drafts: str,
    allow_http: bool,
    timeout: float,
    retries: int,
    **setup: Any,
) -> None:
    """Migrate a live W&B project: rewrite its reports, drafts, workspaces and alerts.

    Before each write the object is read again and skipped if it changed since it was fetched
    (or since the saved plan); its original is backed up first (files of mode 0600 in a 0700
    folder); after the write it is read back to check W&B stores what was sent. One failing
    object never stops the others. Undo with `wbmigrate rollback BACKUP_DIR`.

    Exit code: 0 when every object was migrated or needed nothing, 1 when some were skipped or
    failed (or you answered no), 2 on a usage, mapping, auth or connection error (nothing
    written).
    """
    entity, project = _live_target(target)
    migration, options = migration_setup(**setup)
    saved = load_plan(Path(plan_path)) if plan_path else None
    if saved is not None:
        migration = find_mapping(setup["mapping_ref"]).migration(saved.start, saved.end)
        check_plan(saved, f"{entity}/{project}", migration)
        options, drafts = saved.options, "migrate" if saved.drafts else "skip"
    client = connect(allow_http, timeout, retries)
    objects = _fetch(client, entity, project, drafts == "migrate")
    planned = make_plan([o.source() for o in objects], migration, options)
    todo = _work(objects, planned, saved)
    gone = _gone(objects, saved, entity, project) + _unreadable(objects, planned)
    if not todo:
        if gone:
            click.echo(outcome_report.to_text(gone, f"Applied to {entity}/{project}"))
            _exit_for(gone)
        click.echo(f"Nothing to migrate in {entity}/{project}.")
        return
    status(plan_report.summary(planned.tally))
    confirm_or_refuse(f"Write {len(todo)} objects in {entity}/{project}?", yes)
    folder = Path(backup_dir) if backup_dir else _default_backup_dir(entity, project)
    backup = Backup(
        folder,
        {
            "target": f"{entity}/{project}",
            "base_url": client.base_url,
            **_migration_info(migration, options),
        },
    )
    with _progress(len(todo), "Applying") as tick:
        results = run_all(
            todo,
            lambda item: apply_one(client, item[0], item[1], migration, options, backup),
            jobs,
            tick,
        )
    results = gone + results
    click.echo(outcome_report.to_text(results, f"Applied to {entity}/{project}"))
    click.echo(f"Backups: {folder}  (undo: wbmigrate rollback {folder} --yes)")
    _exit_for(results)


def _gone(objects: list[LiveObject], saved: Any, entity: str, project: str) -> list[Outcome]:
    """Objects of the saved plan that the project no longer holds: failed, and said so."""
    if saved is None:
        return []
    there = {o.id for o in objects}
    return [
        Outcome(
            LiveObject(entry.kind, entry.id, entry.name, "", None, entity, project),
            Done.FAILED,
            "no longer exists",
        )
        for entry in saved.objects.values()
        if entry.id not in there
    ]


def _unreadable(objects: list[LiveObject], planned: Plan) -> list[Outcome]:
    """Objects that cannot be read (a spec that is not JSON, of no known shape): never
    written, and said so."""
    return [
        Outcome(obj, Done.SKIPPED, f"not read: {p.error}")
        for obj, p in zip(objects, planned.objects, strict=True)
        if p.status is Status.ERROR
    ]


def _work(
    objects: list[LiveObject], planned: Plan, saved: Any
) -> list[tuple[LiveObject, Expected]]:
    """The objects to write, each with the state it must still be in."""
    changing = {p.source.origin for p in planned.objects if p.status is Status.CHANGES}
    if saved is None:
        return [(o, Expected(o.fingerprint)) for o in objects if o.id in changing]
    work = []
    for obj in objects:
        entry = saved.objects.get(obj.id)
        if entry is not None:
            work.append((obj, Expected(entry.fingerprint, entry.changes)))
    return work


def _default_backup_dir(entity: str, project: str) -> Path:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    folder = Path("wbmigrate-backups") / f"{entity}-{project}-{stamp}"
    for n in range(2, 1000):  # two runs within one second
        if not folder.exists():
            break
        folder = folder.with_name(f"{entity}-{project}-{stamp}-{n}")
    return folder


def _migration_info(migration: Any, options: Options) -> dict[str, Any]:
    return {**plan_report.mapping_entry(migration, options), "wbmigrate": __version__}


@contextmanager
def _progress(total: int, label: str) -> Iterator[Callable[[Outcome], None]]:
    """A progress bar on stderr when it is a terminal and the run is long enough to need one."""
    if total < 5 or not sys.stderr.isatty():
        yield lambda outcome: None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield lambda outcome: bar.update(1)


def _exit_for(results: list[Outcome]) -> None:
    if any(r.status in (Done.SKIPPED, Done.FAILED) for r in results):
        exit_with(ExitCode.FINDINGS)


# --- rollback ---------------------------------------------------------------------------------


@cli.command(
    context_settings=CONTEXT,
    epilog=examples(
        "wbmigrate rollback wbmigrate-backups/my-team-my-project-20261129T101500Z --yes",
    ),
)
@click.argument("backup_dir", type=click.Path(exists=True, file_okay=False), metavar="BACKUP_DIR")
@click.option("--yes", "-y", is_flag=True, help="Write without asking.")
@click.option(
    "--force",
    is_flag=True,
    help="Also restore objects edited after the migration (their edits are lost).",
)
@click.option("--jobs", "-j", type=click.IntRange(1, 32), default=4, show_default=True)
@connection_options
def rollback(
    backup_dir: str,
    yes: bool,
    force: bool,
    jobs: int,
    allow_http: bool,
    timeout: float,
    retries: int,
) -> None:
    """Restore every object an apply run wrote to its exact original.

    An object edited after the migration is refused (exit 1) unless --force.
    """
    manifest, items = load_backup(Path(backup_dir))
    client = connect(allow_http, timeout, retries)
    if manifest.get("base_url") != client.base_url:
        raise UserError(
            f"the backup is from {manifest.get('base_url')}, but WANDB_BASE_URL is "
            f"{client.base_url}"
        )
    sent = sum(item.sent_sha256 is not None for item in items)
    confirm_or_refuse(f"Restore {sent} objects in {manifest.get('target')}?", yes)
    with _progress(len(items), "Restoring") as tick:
        results = run_all(items, lambda item: restore_one(client, item, force), jobs, tick)
    click.echo(outcome_report.to_text(results, f"Rolled back {manifest.get('target')}"))
    _exit_for(results)


# --- export -----------------------------------------------------------------------------------


@cli.command(
    context_settings=CONTEXT,
    epilog=examples(
        "wbmigrate export my-team/my-project dashboards/",
        "wbmigrate plan dashboards/",
    ),
)
@click.argument("target", metavar="ENTITY/PROJECT")
@click.argument("folder", type=click.Path(file_okay=False), metavar="DIR")
@DRAFTS
@connection_options
def export(
    target: str, folder: str, drafts: str, allow_http: bool, timeout: float, retries: int
) -> None:
    """Write a live project as dashboards-as-code: one readable JSON file per object.

    Each file holds the object's metadata and its spec, pretty-printed with W&B's key order,
    under reports/, workspaces/ and automations/. `plan DIR` and `check` read them.
    """
    entity, project = _live_target(target)
    client = connect(allow_http, timeout, retries)
    paths = export_objects(_fetch(client, entity, project, drafts == "migrate"), Path(folder))
    for path in paths:
        click.echo(str(path))
    status(f"Exported {len(paths)} objects to {folder}.")
