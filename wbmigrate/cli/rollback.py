"""`wbmigrate rollback`: put back the originals an `apply` run backed up, of one project or of
every project of a backup set."""

from __future__ import annotations

from pathlib import Path

import click

from wbmigrate.cli.base import UserError, confirm_or_refuse, examples, interruptible, status
from wbmigrate.cli.options import FORMAT, Connection, connection_options, flag
from wbmigrate.cli.project import connect
from wbmigrate.cli.writes import restore_projects
from wbmigrate.live.backup import BackupError
from wbmigrate.live.restore import load_backups
from wbmigrate.report.words import plural


@click.command(
    epilog=examples(
        "wbmigrate rollback wbmigrate-backups/my-team-my-project-20261129T101500Z --yes",
    ),
)
@click.argument("backup_dir", type=click.Path(), metavar="BACKUP_DIR")
@flag("--yes", "-y", "Write without asking.")
@flag("--force", "Also restore objects edited after the migration (their edits are lost).")
@click.option("--jobs", "-j", type=click.IntRange(1, 32), default=4)
@click.option(
    "--project",
    "projects",
    multiple=True,
    metavar="ENTITY/PROJECT",
    help="Of a run over several projects, restore only this one (repeatable).",
)
@FORMAT
@connection_options
@interruptible("nothing restored")
def rollback(
    backup_dir: str,
    yes: bool,
    force: bool,
    jobs: int,
    projects: tuple[str, ...],
    format_: str,
    connection: Connection,
) -> None:
    """Restore every object an apply run wrote to its exact original.

    An object edited after the migration is refused (exit 1) unless --force. The backup is
    checked whole before anything is written: a file or journal line that was changed, deleted
    or belongs to another project refuses the rollback (exit 2). Ctrl-C: 130, as for apply.
    `--format json` prints the result as a document, as for apply. The backup of a run over
    several projects restores them all, or those named by --project, once the whole set is
    checked: every project the run started has its backup there, of its own project and of
    the set's host (else exit 2, a line per problem; --force does not change that).
    """
    try:
        chosen = load_backups(Path(backup_dir), projects)
    except BackupError as exc:
        raise UserError(f"{exc}; nothing restored") from None
    manifest, loaded = chosen.manifest, chosen.backups
    for target, backup in loaded.items():
        for note in backup.notes:
            status(f"Warning: {target}: {note}" if chosen.is_set else f"Warning: {note}")
    strangers = [p for p in projects if p not in loaded and not chosen.is_set]
    if strangers:
        raise UserError(
            f"{backup_dir} holds the backup of {', '.join(loaded)}, not of "
            f"{', '.join(strangers)}; nothing restored"
        )
    client = connect(connection)
    if manifest.get("base_url") != client.base_url:
        raise UserError(
            f"the backup is from {manifest.get('base_url')}, but the W&B host is {client.base_url}"
        )
    status(f"Restoring {', '.join(loaded) or 'nothing'} on {client.base_url} ...")
    sent = sum(item.sent_sha256 is not None for b in loaded.values() for item in b.items)
    where = f"{len(loaded)} projects" if chosen.is_set else next(iter(loaded))
    confirm_or_refuse(f"Restore {plural(sent, 'object')} in {where}?", yes)
    restore_projects(client, loaded, Path(backup_dir), force, jobs, format_, not chosen.is_set)
