"""`wbmigrate apply | rollback | export`: write to a live project, undo it, or save it as files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from wbmigrate.cli.base import (
    CONTEXT,
    UserError,
    confirm_or_refuse,
    examples,
    finish,
    migration_options,
    migration_setup,
    status,
)
from wbmigrate.cli.project import (
    DRAFTS,
    Connection,
    connect,
    connection_options,
    live_target,
    open_project,
    progress,
    tell_found,
)
from wbmigrate.live.apply import apply_one, failed, restore_one, run_all
from wbmigrate.live.backup import load_backup
from wbmigrate.live.export import export_objects
from wbmigrate.live.planfile import load_plan, saved_migration
from wbmigrate.live.project import (
    Census,
    prepare_apply,
    start_backup,
)
from wbmigrate.mapping import find_mapping
from wbmigrate.report import live as live_report
from wbmigrate.report import plan as plan_report

# --- apply ---------------------------------------------------------------------------------------


@click.command(
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
    connection: Connection,
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

    live = live_target(target)
    migration, options = migration_setup(**setup)
    saved = load_plan(Path(plan_path)) if plan_path else None
    if saved is not None:
        migration = saved_migration(saved, find_mapping(setup["mapping_ref"]), "/".join(live))
        options, drafts = saved.options, "migrate" if saved.drafts else "skip"
    project = open_project(live, drafts == "migrate", connection)
    census = Census()
    work = prepare_apply(project, migration, options, saved, census)
    tell_found(census, project.drafts)
    heading = f"Applied to {project.target}"
    if not work.todo:
        if work.settled:
            click.echo(live_report.to_text(work.settled, heading))
            finish(failed(work.settled))
        click.echo(f"Nothing to migrate in {project.target}.")
        return
    status(plan_report.summary(work.tally))
    confirm_or_refuse(f"Write {len(work.todo)} objects in {project.target}?", yes)
    backup = start_backup(project, migration, options, Path(backup_dir) if backup_dir else None)
    with progress(len(work.todo), "Applying") as tick:
        written = run_all(
            work.todo,
            lambda item: apply_one(project.client, item[0], item[1], migration, options, backup),
            jobs,
            tick,
        )
    results = work.settled + written
    click.echo(live_report.to_text(results, heading))
    click.echo(f"Backups: {backup.folder}  (undo: wbmigrate rollback {backup.folder} --yes)")
    finish(failed(results))


# --- rollback ------------------------------------------------------------------------------------


@click.command(
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
    connection: Connection,
) -> None:
    """Restore every object an apply run wrote to its exact original.

    An object edited after the migration is refused (exit 1) unless --force.
    """

    manifest, items = load_backup(Path(backup_dir))
    client = connect(connection)
    if manifest.get("base_url") != client.base_url:
        raise UserError(
            f"the backup is from {manifest.get('base_url')}, but WANDB_BASE_URL is "
            f"{client.base_url}"
        )
    sent = sum(item.sent_sha256 is not None for item in items)
    confirm_or_refuse(f"Restore {sent} objects in {manifest.get('target')}?", yes)
    with progress(len(items), "Restoring") as tick:
        results = run_all(items, lambda item: restore_one(client, item, force), jobs, tick)
    click.echo(live_report.to_text(results, f"Rolled back {manifest.get('target')}"))
    finish(failed(results))


# --- export --------------------------------------------------------------------------------------


@click.command(
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
def export(target: str, folder: str, drafts: str, connection: Connection) -> None:
    """Write a live project as dashboards-as-code: one readable JSON file per object.

    Each file holds the object's metadata and its spec, pretty-printed with W&B's key order,
    under reports/, workspaces/ and automations/. `plan DIR` and `check` read them.
    """

    project = open_project(live_target(target), drafts == "migrate", connection)
    census = Census()
    paths = export_objects(list(project.read(census)), Path(folder))
    tell_found(census, project.drafts)
    for path in paths:
        click.echo(str(path))
    status(f"Exported {len(paths)} objects to {folder}.")
