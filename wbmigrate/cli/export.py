"""`wbmigrate export`: a live project as dashboards-as-code files."""

from __future__ import annotations

from pathlib import Path

import click

from wbmigrate.cli.base import UserError, examples, finish, interruptible, status
from wbmigrate.cli.options import DRAFTS, Connection, connection_options, only_option
from wbmigrate.cli.project import live_targets, one_project, open_project, tell_found
from wbmigrate.live.export import export_objects, prepare_folder
from wbmigrate.live.project import Counts
from wbmigrate.redact import printable
from wbmigrate.report import live as live_report


@click.command(
    epilog=examples("wbmigrate export my-team/my-project dashboards/", "wbmigrate plan dashboards/")
)
@click.argument("target", metavar="ENTITY/PROJECT")
@click.argument("folder", type=click.Path(), metavar="DIR")
@DRAFTS
@only_option
@connection_options
@interruptible("some files may have been written")
def export(target: str, folder: str, drafts: str, connection: Connection) -> None:
    """Write a live project as dashboards-as-code: one readable JSON file per object.

    Each file holds the object's metadata and its spec, pretty-printed with W&B's key order,
    under reports/, workspaces/ and automations/. `plan DIR` and `check` read them. An object
    that cannot be exported is reported in one line and the others are written (exit 1).
    ENTITY/PROJECT may be the project's W&B URL, or a report's or saved workspace's (that
    object alone, as --only picks it).
    """
    live = one_project(live_targets((target,)))
    if live is None:
        raise UserError(f"{printable(target)}: not ENTITY/PROJECT")
    prepare_folder(Path(folder))
    project = open_project(live, drafts == "migrate", connection)
    census = Counts()
    results = export_objects(project.read(census), Path(folder))
    tell_found(census, project.drafts)
    for result in results:
        click.echo(live_report.export_line(result), err=result.path is None)
    written = sum(r.path is not None for r in results)
    of = "" if written == len(results) else f" of {len(results)}"
    status(f"Exported {written}{of} {'object' if len(results) == 1 else 'objects'} to {folder}.")
    finish(written < len(results))
