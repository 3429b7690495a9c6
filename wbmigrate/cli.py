"""The `wbmigrate` command line: parse arguments, call the library, print, exit.

Library errors (WbmigrateError) become one-line `Error: ...` messages with exit code 2.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

from wbmigrate import __version__
from wbmigrate.engine.model import Mode, Options
from wbmigrate.errors import WbmigrateError
from wbmigrate.exit_codes import ExitCode
from wbmigrate.files import read_sources
from wbmigrate.mapping import (
    DEFAULT_MAPPING,
    MappingError,
    Migration,
    Severity,
    bundled_ids,
    find_mapping,
    load_mapping,
)
from wbmigrate.plan import Status, make_plan
from wbmigrate.report import mapping_table
from wbmigrate.report import plan as plan_report

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class UserError(click.ClickException):
    """Shown as `Error: <line>` for each line of the message, exit code 2."""

    exit_code = ExitCode.ERROR

    def show(self, file: Any = None) -> None:
        for line in self.format_message().splitlines():
            click.echo(f"Error: {line}", err=True)


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MappingError as exc:
            raise UserError("\n".join(str(p) for p in exc.problems)) from None
        except WbmigrateError as exc:
            raise UserError(str(exc)) from None


def _examples(*lines: str) -> str:
    """An epilog of examples that click prints as written (\b stops its rewrapping)."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


@click.group(
    cls=_Group,
    context_settings=CONTEXT,
    epilog=_examples(
        "wbmigrate plan fixtures/demo-project",
        "wbmigrate mappings show prime-rl",
        "wbmigrate mappings validate my-mapping.yaml",
    ),
)
@click.version_option(__version__, "-V", "--version", prog_name="wbmigrate")
def cli() -> None:
    """Migrate W&B reports, workspaces and alerts when the metrics behind them are renamed.

    A versioned mapping file says which metrics and config keys were renamed or removed; the
    bundled `prime-rl` mapping covers prime-rl's off_policy/* -> staleness/* renames (PR #4253).
    """


@cli.group(cls=_Group, context_settings=CONTEXT)
def mappings() -> None:
    """List, show and validate mapping files."""


@mappings.command(
    "list",
    context_settings=CONTEXT,
    epilog=_examples("wbmigrate mappings list", "wbmigrate mappings list --long"),
)
@click.option("--long", "-l", "long_", is_flag=True, help="Also print versions and title.")
def mappings_list(long_: bool) -> None:
    """Print the ids of the bundled mappings, one per line."""
    for mapping_id in bundled_ids():
        if long_:
            mapping = find_mapping(mapping_id)
            click.echo(f"{mapping_id}\t{' '.join(mapping.versions)}\t{mapping.title}")
        else:
            click.echo(mapping_id)


@mappings.command(
    "show",
    context_settings=CONTEXT,
    epilog=_examples(
        "wbmigrate mappings show prime-rl",
        "wbmigrate mappings show prime-rl --to 2026.08.21",
        "wbmigrate mappings show ./my-mapping.yaml --format json",
    ),
)
@click.argument("mapping", metavar="ID|PATH")
@click.option(
    "--from", "start", metavar="VERSION", help="First step to apply (default: the oldest)."
)
@click.option("--to", metavar="VERSION", help="Last step to apply (default: the latest).")
@click.option(
    "--format",
    "format_",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
)
def mappings_show(mapping: str, start: str | None, to: str | None, format_: str) -> None:
    """Print the rename and removal table of a mapping, composed over its steps.

    Chains collapse: a metric renamed in one step and again in a later one shows its final
    name; a metric renamed and later removed shows as removed.
    """
    loaded = find_mapping(mapping)
    migration = loaded.migration(start, to)
    render: Callable[..., str] = {
        "text": mapping_table.to_text,
        "json": mapping_table.to_json,
        "markdown": mapping_table.to_markdown,
    }[format_]
    click.echo(render(loaded, migration), nl=False)
    _warn(loaded.warnings)


@mappings.command(
    "validate",
    context_settings=CONTEXT,
    epilog=_examples(
        "wbmigrate mappings validate my-mapping.yaml",
        "wbmigrate mappings validate mappings/*.yaml",
    ),
)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
def mappings_validate(paths: tuple[str, ...]) -> None:
    """Check mapping files; exit 0 when all are valid, 2 with file:line errors otherwise.

    Warnings (such as many-to-one renames, which cannot be undone) do not fail validation.
    """
    failed = False
    for path in paths:
        try:
            mapping = load_mapping(path)
        except MappingError as exc:
            failed = True
            for problem in exc.problems:
                click.echo(f"Error: {problem}", err=True)
            continue
        except WbmigrateError as exc:
            failed = True
            click.echo(f"Error: {exc}", err=True)
            continue
        _warn(mapping.warnings)
        renamed = len(mapping.migration().metrics)
        click.echo(
            f"{path}: valid ({mapping.id}, {len(mapping.steps)} steps, "
            f"{renamed} old metric names, latest {mapping.latest})"
        )
    if failed:
        _exit(ExitCode.ERROR)


# --- plan ----------------------------------------------------------------------------------------


def migration_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options every migrating command shares: which mapping, which steps, which mode."""
    options = [
        click.option(
            "--mapping",
            "mapping_ref",
            default=DEFAULT_MAPPING,
            show_default=True,
            envvar="WBMIGRATE_MAPPING",
            metavar="ID|PATH",
            help="A bundled mapping id or a mapping file.",
        ),
        click.option(
            "--from",
            "start",
            metavar="VERSION",
            help="First mapping step to apply (default: the oldest).",
        ),
        click.option(
            "--to", metavar="VERSION", help="Last mapping step to apply (default: the latest)."
        ),
        click.option(
            "--mode",
            type=click.Choice([m.value for m in Mode]),
            default="dual",
            show_default=True,
            envvar="WBMIGRATE_MODE",
            help="dual: keep each old key and add the new one beside it, so runs from "
            "before the rename stay visible; replace: swap old keys for new ones.",
        ),
        click.option(
            "--rewrite-text",
            is_flag=True,
            help="Also rewrite whole metric names in markdown, titles and descriptions "
            "(default: report them for review).",
        ),
        click.option(
            "--no-annotate",
            is_flag=True,
            help="Do not add the migration-boundary note to migrated views.",
        ),
        click.option(
            "--project-keys",
            type=click.File("r", encoding="utf-8"),
            metavar="FILE",
            help="Known metric keys of the project, one per line: sharpens the "
            "analysis of metric regexes.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _migration_setup(
    mapping_ref: str,
    start: str | None,
    to: str | None,
    mode: str,
    rewrite_text: bool,
    no_annotate: bool,
    project_keys: Any,
) -> tuple[Migration, Options]:
    mapping = find_mapping(mapping_ref)
    _warn(mapping.warnings)
    keys = frozenset(line.strip() for line in project_keys or () if line.strip())
    options = Options(
        mode=Mode(mode), project_keys=keys, rewrite_text=rewrite_text, annotate=not no_annotate
    )
    return mapping.migration(start, to), options


@cli.command(
    context_settings=CONTEXT,
    epilog=_examples(
        "wbmigrate plan fixtures/demo-project",
        "wbmigrate plan dashboards/ --mode replace --format markdown > plan.md",
        "wbmigrate plan report.json --to 2026.08.21 --format json",
    ),
)
@click.argument("target", metavar="TARGET")
@migration_options
@click.option(
    "--format",
    "format_",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
)
@click.option("--verbose", "-v", is_flag=True, help="Also show informational notes.")
def plan(target: str, format_: str, verbose: bool, **setup: Any) -> None:
    """Show what migrating TARGET would change, and write nothing.

    TARGET is a folder of spec files (report and workspace view specs and saved triggers as
    JSON, as kept in git) or one such file. Every affected panel, run set and alert is listed
    with what changes, what is removed and what needs a person's review.

    Exit code: 0 when every object was planned, 1 when some could not be read, 2 on a usage or
    mapping error.
    """
    migration, options = _migration_setup(**setup)
    path = Path(target)
    if not path.exists():
        raise UserError(f"{target}: no such file or folder")
    result = make_plan(read_sources(path), migration, options)
    render = {
        "text": lambda p: plan_report.to_text(p, verbose),
        "markdown": lambda p: plan_report.to_markdown(p, verbose),
        "json": plan_report.to_json,
    }[format_]
    click.echo(render(result), nl=False)
    if result.count(Status.ERROR):
        _exit(ExitCode.FINDINGS)


def _warn(problems: tuple[Any, ...]) -> None:
    for problem in problems:
        if problem.severity is Severity.WARNING:
            click.echo(f"Warning: {problem}", err=True)


def _exit(code: ExitCode) -> NoReturn:
    raise SystemExit(int(code))


def main() -> None:
    cli(prog_name="wbmigrate")
