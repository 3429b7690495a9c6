"""`wbmigrate check`: the CI gate for dashboards and configs kept as code."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from wbmigrate.check.config import CONFIGURABLE, CheckConfig, find_config
from wbmigrate.check.model import FileReport
from wbmigrate.check.run import add_findings, check_paths, fix_files
from wbmigrate.check.targets import Targets, targets_for
from wbmigrate.cli.base import examples, finish
from wbmigrate.cli.options import Command, flag, migration_options, migration_setup
from wbmigrate.errors import Level
from wbmigrate.report import check as check_report
from wbmigrate.report.words import plural

if TYPE_CHECKING:  # --validate and the CI formats are imported when asked for
    from wbmigrate.check.validate import Validation

FORMATS = ["text", "concise", "json", "sarif", "github", "markdown"]
RULES = click.Choice(list(CONFIGURABLE))  # internal-error is always reported


def _split(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> Any:
    """Rules separated by commas, as ruff takes them (`--select renamed-metric,needs-review`)."""
    names = [n.strip() for value in values for n in value.split(",") if n.strip()]
    return tuple(RULES.convert(n, param, ctx) for n in names)


def _rules(name: str, dest: str, text: str) -> Callable[[Command], Command]:
    """--select and --ignore: rules, comma-separated and repeatable."""
    return click.option(
        name, dest, multiple=True, metavar="RULE[,RULE]", callback=_split, help=text
    )


@click.command(
    epilog=examples(
        "wbmigrate check .",
        "wbmigrate check dashboards/ configs/ --fix",
        "wbmigrate check . --diff",
        "wbmigrate check . --statistics",
        "wbmigrate check . --select renamed-metric,removed-metric",
        "wbmigrate check . --format sarif --exit-zero > wbmigrate.sarif",
        "wbmigrate check configs/ --validate",
    ),
)
@click.argument("paths", nargs=-1, type=click.Path(exists=True), metavar="[PATH]...")
@migration_options
@flag("--fix", "Rewrite files in place; only the changed names differ, comments and layout stay.")
@flag("--diff", "Print the fixes as a unified diff; write nothing.")
@flag(
    "--validate",
    "Also load each prime-rl config with prime-rl's own schema (after --fix: as fixed), "
    "when prime_rl is importable here; else say so and check keys against the mapping only.",
)
@click.option(
    "--format",
    "--output-format",
    "format_",
    type=click.Choice(FORMATS),
    default="text",
    envvar="WBMIGRATE_FORMAT",
    help="text groups results by file; concise is one line each (path:line:col: level rule "
    "message); json follows schemas/check-report.schema.json; github writes workflow annotations.",
)
@_rules(
    "--select",
    "selected",
    "Report only these rules (comma-separated, repeatable; replaces `select` of pyproject.toml).",
)
@_rules(
    "--ignore",
    "ignored",
    "Do not report these rules (comma-separated, repeatable; after --select).",
)
@click.option(
    "--exclude",
    multiple=True,
    metavar="GLOB",
    help="Skip paths matching this gitignore-style pattern.",
)
@flag(
    "--force-exclude",
    "Apply exclude patterns to files named on the command line too (for pre-commit).",
)
@flag(
    "--exit-zero",
    "Exit 0 even when errors or warnings are found (2 still means a usage error or a bug).",
)
@flag("--statistics", "Print the number of findings per rule and level instead of the findings.")
@flag(
    "-q",
    "--quiet",
    "Print only errors and warnings, without the summary line: nothing when all is clear.",
)
@click.pass_context
def check(
    ctx: click.Context,
    /,
    paths: tuple[str, ...],
    fix: bool,
    diff: bool,
    validate: bool,
    format_: str,
    selected: tuple[str, ...],
    ignored: tuple[str, ...],
    exclude: tuple[str, ...],
    force_exclude: bool,
    exit_zero: bool,
    statistics: bool,
    quiet: bool,
    **setup: Any,
) -> None:
    """Find old metric names and config keys in files kept in git, and fix them.

    Reads W&B specs (JSON or YAML: `wbmigrate export` files, raw report, workspace and trigger
    specs), Python (`wandb_workspaces`, `wandb.automations`, `wandb.log`...), prime-rl configs
    (TOML, JSON, YAML) and command-line flags in shell scripts, CI files and Markdown code
    blocks. Folders are walked (`.` when no PATH is given, as ruff does); `.git`,
    `.gitignore`d paths and binary files are skipped.

    Findings are errors (wbmigrate has a fix, or a removed config key that no longer loads),
    warnings (a person must decide; or an old config key that still loads, with its fix) or
    notes (an old name in a comment, docstring or prose: information only).

    Settings may live in `[tool.wbmigrate]` of pyproject.toml (mapping, mode, from, to,
    exclude, select, ignore, per-file-ignores); options win. Suppress one line with a comment
    `# wbmigrate: ignore[RULE] reason` (the reason is required).

    Exit code: 0 when no error or warning is left (notes never fail; always with --exit-zero),
    1 when some are (after --fix: left unfixed; with --diff: fixes to make), 2 usage or mapping
    error, or wbmigrate failed on a file (a bug: every other file is still reported).
    """
    if statistics and (diff or format_ != "text"):
        raise click.UsageError(
            "--statistics prints a text table: use it without --diff, with --format text"
        )
    config = find_config(Path.cwd())
    _apply_config(ctx, setup, config)
    migration, options = migration_setup(**setup)
    targets, ignores = targets_for(migration, options), config.ignored(selected, ignored)
    validation = _validation(targets) if validate else None
    roots = [Path(p) for p in paths or ["."]]
    reports = check_paths(
        roots, targets, config, ignores, exclude, fixes=fix or diff, force_exclude=force_exclude
    )
    fixed = 0
    if fix and not diff:
        done = fix_files(reports, targets, config, ignores)
        for reason in done.refused:
            click.echo(f"Error: {reason}", err=True)
        reports, fixed = done.reports, done.count
    if validation is not None:  # what prime-rl's schema rejects, as the files now are on disk
        reports = add_findings(reports, validation, config, ignores)
        if not quiet:
            click.echo(validation.summary(), err=True)
    if diff:
        click.echo(check_report.to_diff(reports), nl=False)
        if not quiet:
            click.echo(check_report.summary(reports), err=True)
        _finish(reports, any(r.fixed for r in reports), exit_zero)
        return
    click.echo(_rendered(reports, format_, fixed, statistics, quiet), nl=False)
    # errors and warnings fail a run; notes are information and never do
    _finish(reports, any(f.level is not Level.NOTE for r in reports for f in r.findings), exit_zero)


def _validation(targets: Targets) -> Validation | None:
    """prime-rl's schema for --validate (prime_rl is imported only now); when it cannot be
    had, one line says so and the run checks keys against the mapping only."""
    from wbmigrate.check.validate import Validation, load_schema

    schema = load_schema()
    if isinstance(schema, str):
        click.echo(schema, err=True)
        return None
    return Validation(schema, targets)


def _rendered(
    reports: list[FileReport], format_: str, fixed: int, statistics: bool, quiet: bool
) -> str:
    """The report as asked for (the CI formats are imported only then)."""
    if statistics:
        return check_report.to_statistics(reports, fixed, quiet)
    if format_ in ("text", "concise"):
        return check_report.to_text(reports, fixed, quiet, concise=format_ == "concise")
    if format_ == "json":
        return check_report.to_json(reports)
    if format_ == "markdown":
        return check_report.to_markdown(reports, fixed)
    from wbmigrate.report import ci as ci_report

    return ci_report.to_sarif(reports) if format_ == "sarif" else ci_report.to_github(reports)


def _finish(reports: list[FileReport], failed: bool, exit_zero: bool) -> None:
    """The exit code, once the report is out. A file wbmigrate failed on is a bug, not a
    finding: exit 2 (the one exit path besides finish(), and --exit-zero does not hide it),
    with one line naming the files; else finish(): 1 when something fails, unless --exit-zero."""
    broken = [r.path for r in reports if any(f.internal for f in r.findings)]
    if broken:
        named = ", ".join(broken[:3]) + (", ..." if len(broken) > 3 else "")
        click.echo(
            f"Error: wbmigrate failed on {plural(len(broken), 'file')} ({named}): a bug, "
            "please report it; every other file was checked.",
            err=True,
        )
        finish(error=True)
    finish(failed and not exit_zero)


def _apply_config(ctx: click.Context, setup: dict[str, Any], config: CheckConfig) -> None:
    """Settings from [tool.wbmigrate], where the command line left the default."""
    defaults = {"mapping_ref": config.mapping, "mode": config.mode, "start": config.start}
    defaults["to"] = config.to
    unset = (click.core.ParameterSource.DEFAULT, None)
    for name, value in defaults.items():
        if value is not None and ctx.get_parameter_source(name) in unset:
            setup[name] = value
