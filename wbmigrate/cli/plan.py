"""`wbmigrate plan`: what a migration would change, for files on disk or a live project."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import click

from wbmigrate.check.config import find_config
from wbmigrate.cli.base import (
    CONTEXT,
    DetailedCommand,
    UserError,
    examples,
    finish,
    migration_options,
    migration_setup,
    status,
)
from wbmigrate.cli.batch import interruptible
from wbmigrate.cli.project import (
    DRAFTS,
    Connection,
    connection_options,
    live_target,
    open_project,
    tell_found,
)
from wbmigrate.files import read_sources
from wbmigrate.live.project import Census, plan_project
from wbmigrate.plan import Planned, Status, Tally, plan_each
from wbmigrate.report import plan as plan_report
from wbmigrate.report.words import printable

FORMATS = click.Choice(["text", "markdown", "json"])


@click.command(
    cls=DetailedCommand,
    context_settings=CONTEXT,
    epilog=examples(
        "wbmigrate plan fixtures/demo-project",
        "wbmigrate plan my-team/my-project --out plan.json",
        "wbmigrate plan dashboards/ --mode replace --format markdown > plan.md",
        "wbmigrate plan report.json --to 2026.08.21 --format json",
        "wbmigrate plan my-team/my-project --detailed-exitcode > plan.txt",
    ),
)
@click.argument("target", metavar="TARGET", required=False)
@migration_options
@click.option("--format", "format_", type=FORMATS, default="text", show_default=True)
@click.option("--verbose", "-v", is_flag=True, help="Also show unchanged objects and info notes.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, writable=True),
    metavar="PLAN.json",
    help="Save the exact changes and each object's fingerprint, for `apply --plan`.",
)
@click.option(
    "--detailed-exitcode",
    is_flag=True,
    help="Exit 0 when nothing would change, 2 when something would, 1 on any error.",
)
@DRAFTS
@connection_options
@interruptible("nothing written")
def plan(
    target: str | None,
    format_: str,
    verbose: bool,
    out: str | None,
    detailed_exitcode: bool,
    drafts: str,
    connection: Connection,
    **setup: Any,
) -> None:
    """Show what migrating TARGET would change, and write nothing to it.

    TARGET is ENTITY/PROJECT (or wandb://ENTITY/PROJECT, or the project's W&B URL; without
    it, WANDB_ENTITY/WANDB_PROJECT) for a live W&B project: its published
    reports, report drafts, saved workspaces and automations. Or it is a folder of spec files
    (view specs, saved triggers or `wbmigrate export` files, as JSON) or one such file; an
    existing path wins over ENTITY/PROJECT. A folder is walked as `check` walks it
    (`.gitignore` and `exclude` of `[tool.wbmigrate]` obeyed), and JSON files that are no
    spec (package.json, configs) are skipped.

    Every affected panel, run set and alert is listed with what changes, what is removed and
    what needs a person's review. Exit code: 0 when every object was planned, 1 when some could
    not be read, 2 on a usage, mapping, auth or connection error, 130 after Ctrl-C.

    With --detailed-exitcode (terraform's): 0 when every object was planned and none would
    change, 2 when every object was planned and some would change, 1 on any error (usage,
    mapping, auth or connection, or an object that could not be read), 130 after Ctrl-C.
    """
    migration, options = migration_setup(**setup)
    chunks: Callable[[Iterable[Planned]], Iterator[str]] = {
        "text": lambda objs: plan_report.text_chunks(migration, options, objs, verbose),
        "markdown": lambda objs: plan_report.markdown_chunks(migration, options, objs, verbose),
        "json": lambda objs: plan_report.json_chunks(migration, options, objs),
    }[format_]
    tally = Tally()
    if target and Path(target).exists():
        if out:
            raise UserError("--out saves a plan for `apply`, which needs a live ENTITY/PROJECT")
        sources = read_sources(Path(target), _exclude(Path(target)))
        _print(chunks(map(tally.add, plan_each(sources, migration, options))))
    else:
        live = live_target(target, files_too=True)
        if out and not Path(out).resolve().parent.is_dir():
            raise UserError(f"--out {printable(out)}: no such folder; nothing read")
        project = open_project(live, drafts == "migrate", connection)
        census = Census()
        planned = plan_project(project, migration, options, census, Path(out) if out else None)
        _print(chunks(map(tally.add, planned)))
        tell_found(census, project.drafts)
        if out:
            status(f"Plan saved to {out}.")
    finish(tally.failed, changes=detailed_exitcode and bool(tally.statuses[Status.CHANGES]))


def _exclude(target: Path) -> tuple[str, ...]:
    """The `exclude` patterns of `[tool.wbmigrate]`, found from the current folder as `check`
    finds them, so `plan DIR` reads exactly the spec files `check DIR` reads (a file named
    alone is always read)."""
    return find_config(Path.cwd()).exclude if target.is_dir() else ()


def _print(chunks: Iterator[str]) -> None:
    """Stream a report to stdout, from its first object on: an error reading the target (an
    unknown project, a refused key) then comes before any output."""
    pieces = list(itertools.islice(chunks, 2))  # the heading, then the first object's piece
    for piece in itertools.chain(pieces, chunks):
        click.echo(piece, nl=False)
