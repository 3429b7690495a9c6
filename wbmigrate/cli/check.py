"""`wbmigrate check`: the CI gate for dashboards and configs kept as code."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from wbmigrate.check.config import CheckConfig, find_config
from wbmigrate.check.model import FileReport, Rule
from wbmigrate.check.run import check_paths, write_fixes
from wbmigrate.check.targets import Targets
from wbmigrate.cli.base import CONTEXT, examples, finish, migration_options, migration_setup
from wbmigrate.report import check as check_report

FORMATS = ["text", "json", "sarif", "github", "markdown"]


@click.command(
    context_settings=CONTEXT,
    epilog=examples(
        "wbmigrate check .",
        "wbmigrate check dashboards/ configs/ --fix",
        "wbmigrate check . --diff",
        "wbmigrate check . --format sarif > wbmigrate.sarif",
    ),
)
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True), metavar="PATH...")
@migration_options
@click.option(
    "--fix",
    is_flag=True,
    help="Rewrite files in place; only the changed names differ, comments and layout stay.",
)
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing.")
@click.option(
    "--format",
    "format_",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    envvar="WBMIGRATE_FORMAT",
)
@click.option(
    "--ignore",
    "ignored",
    multiple=True,
    metavar="RULE",
    type=click.Choice([r.value for r in Rule]),
    help="Do not report this rule.",
)
@click.option(
    "--exclude",
    multiple=True,
    metavar="GLOB",
    help="Skip paths matching this gitignore-style pattern.",
)
@click.pass_context
def check(
    ctx: click.Context,
    /,
    paths: tuple[str, ...],
    fix: bool,
    diff: bool,
    format_: str,
    ignored: tuple[str, ...],
    exclude: tuple[str, ...],
    **setup: Any,
) -> None:
    """Find old metric names and config keys in files kept in git, and fix them.

    Reads W&B specs (JSON or YAML: `wbmigrate export` files, raw report, workspace and trigger
    specs), Python (`wandb_workspaces`, `wandb.automations`, `wandb.log`...), prime-rl configs
    (TOML, JSON, YAML) and command-line flags in shell scripts, CI files and Markdown code
    blocks. Folders are walked; `.git`, `.gitignore`d paths and binary files are skipped.

    Settings may live in `[tool.wbmigrate]` of pyproject.toml (mapping, mode, from, to,
    exclude, ignore, per-file-ignores); options win. Suppress one line with a comment
    `# wbmigrate: ignore[RULE] reason` (the reason is required).

    Exit code: 0 clean, 1 findings (after --fix: findings left), 2 usage or mapping error.
    """
    config = find_config(Path.cwd())
    _apply_config(ctx, setup, config)
    migration, options = migration_setup(**setup)
    targets = Targets(migration, options)
    reports = check_paths(
        [Path(p) for p in paths],
        targets,
        config,
        [Rule(r) for r in ignored],
        exclude,
        fixes=fix or diff,
    )
    if diff:
        _print_diff(reports)
        click.echo(check_report.summary(reports), err=True)
        finish(any(r.fixed for r in reports))
        return
    fixed = 0
    if fix:
        write_fixes(reports)
        fixed = sum(len([f for f in r.findings if f.fixable]) for r in reports if r.fixed)
        reports = [_remaining(r) for r in reports]
    render: Callable[[list[FileReport]], str] = {
        "text": lambda rs: check_report.to_text(rs, fixed),
        "json": check_report.to_json,
        "sarif": check_report.to_sarif,
        "github": check_report.to_github,
        "markdown": lambda rs: check_report.to_markdown(rs, fixed),
    }[format_]
    click.echo(render(reports), nl=False)
    finish(any(r.findings for r in reports))


def _apply_config(ctx: click.Context, setup: dict[str, Any], config: CheckConfig) -> None:
    """Settings from [tool.wbmigrate], where the command line left the default."""
    defaults = {
        "mapping_ref": config.mapping,
        "mode": config.mode,
        "start": config.start,
        "to": config.to,
    }
    for name, value in defaults.items():
        if value is not None and ctx.get_parameter_source(name) in (
            click.core.ParameterSource.DEFAULT,
            None,
        ):
            setup[name] = value


def _remaining(report: FileReport) -> FileReport:
    """After --fix: what is left in a file (everything, if its fixes could not be applied)."""
    if report.fixed is None:
        return report
    return replace(report, findings=tuple(f for f in report.findings if not f.fixable))


def _print_diff(reports: list[FileReport]) -> None:
    for report in reports:
        if report.fixed is None or report.fixed == report.text:
            continue
        lines = difflib.unified_diff(
            report.text.splitlines(keepends=True),
            report.fixed.splitlines(keepends=True),
            f"a/{report.path}",
            f"b/{report.path}",
        )
        # as git does, a last line without a newline says so
        click.echo(
            "".join(
                line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n"
                for line in lines
            ),
            nl=False,
        )
