"""`wbmigrate plan`: what a migration would change, for files on disk, a live project or many
projects at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from wbmigrate.check.config import find_config
from wbmigrate.cli.base import (
    DetailedCommand,
    UserError,
    examples,
    finish,
    interruptible,
    print_plan,
)
from wbmigrate.cli.options import (
    Connection,
    connection_options,
    flag,
    live_options,
    migration_options,
    migration_setup,
    quiet_flag,
)
from wbmigrate.engine.model import Options
from wbmigrate.files import plan_files
from wbmigrate.mapping import Migration
from wbmigrate.plan import Status, Tally

FORMATS = click.Choice(["text", "markdown", "json"])


@click.command(
    cls=DetailedCommand,
    epilog=examples(
        "wbmigrate plan fixtures/demo-project",
        "wbmigrate plan my-team/my-project --out plan.json",
        "wbmigrate plan my-team                      # every project the key can see",
        "wbmigrate plan 'my-team/qwen3-*' my-team/async-rl --format markdown",
        "wbmigrate plan dashboards/ --mode replace --format markdown > plan.md",
        "wbmigrate plan report.json --to 2026.08.21 --format json",
        "wbmigrate plan my-team/my-project --detailed-exitcode > plan.txt",
    ),
)
@click.argument("targets", metavar="[TARGET]...", nargs=-1)
@migration_options
@click.option("--format", "format_", type=FORMATS, default="text")
@flag("--verbose", "-v", "Also show unchanged objects and info notes.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, writable=True),
    metavar="PLAN.json",
    help="Save the exact changes and each object's fingerprint, for `apply --plan`.",
)
@flag(
    "--detailed-exitcode",
    "Exit 0 when nothing would change, 2 when something would, 1 on any error.",
)
@live_options
@quiet_flag(
    "As ruff's -q: only warnings and errors on stderr (no progress or status lines), "
    "and a text plan of files or of one project is its objects alone (no heading, legend or "
    "summary).",
)
@connection_options
@interruptible("nothing written")
def plan(
    targets: tuple[str, ...],
    format_: str,
    verbose: bool,
    out: str | None,
    detailed_exitcode: bool,
    drafts: str,
    runs: int,
    connection: Connection,
    **setup: Any,
) -> None:
    """Show what migrating TARGET would change, and write nothing to it.

    TARGET is ENTITY/PROJECT (or wandb://ENTITY/PROJECT, or the W&B URL of the project, a
    report or a saved workspace: that object alone; without it, WANDB_ENTITY/WANDB_PROJECT) for
    a live W&B project: its published reports, report drafts, saved workspaces and
    automations. Or it is a folder of spec files (view specs, saved triggers or `wbmigrate
    export` files, as JSON or YAML) or one such file; an existing path, or one ending in / or
    starting with ./, is always a path. A folder is walked as `check` walks it
    (`.gitignore` and `exclude` of `[tool.wbmigrate]` obeyed), and files that are no spec
    (package.json, configs) are skipped.

    Several projects at once: TARGET may be ENTITY (every project the key can see), a glob
    (`team/qwen3-*`), or several of these and ENTITY/PROJECTs. A table comes first (per project:
    objects, changes, warnings, review, upgraded, boundary), then each project's details;
    projects are read four at a time, and one that cannot be read is reported, never stopping
    the others.

    Live, the keys of the project's --runs newest runs are read first (read-only; finished runs
    are cached in ~/.cache/wbmigrate): the plan and the migration note name the project's own
    boundary (the last run that logged an old key, the first that logged a new one, or "not
    upgraded"), and warn where a panel or alert would show a key no run has logged.

    Every affected panel, run set and alert is listed with what changes, what is removed and
    what needs a person's review. Exit code: 0 when every object was planned, 1 when some could
    not be read, 2 on a usage, mapping, auth or connection error, 130 after Ctrl-C.

    With --detailed-exitcode (terraform's): 0 when every object was planned and none would
    change, 2 when every object was planned and some would change, 1 on any error (usage,
    mapping, auth or connection, or an object that could not be read), 130 after Ctrl-C.
    """
    if len(targets) == 1 and targets[0] and Path(targets[0]).exists():
        if out:
            raise UserError("--out saves a plan for `apply`, which needs a live ENTITY/PROJECT")
        tally = _plan_files(Path(targets[0]), *migration_setup(**setup), format_, verbose)
    else:
        from wbmigrate.cli.plan_live import Live, plan_live  # loaded only for a live target

        live = Live(out, drafts == "migrate", runs, connection)
        tally = plan_live(targets, setup, format_, verbose, live)
    finish(tally.failed, changes=detailed_exitcode and bool(tally.statuses[Status.CHANGES]))


def _plan_files(
    target: Path, migration: Migration, options: Options, format_: str, verbose: bool
) -> Tally:
    """The plan of spec files. A folder's `exclude` patterns of `[tool.wbmigrate]` are found
    from the current folder as `check` finds them, so `plan DIR` reads exactly the spec files
    `check DIR` reads (a file named alone is always read)."""
    tally = Tally()
    exclude = find_config(Path.cwd()).exclude if target.is_dir() else ()
    planned = plan_files(target, exclude, migration, options)
    print_plan(format_, migration, options, verbose, map(tally.add, planned))
    return tally
