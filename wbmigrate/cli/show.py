"""`wbmigrate show`: a saved plan (`plan --out`) as the report `plan` printed, from the file
alone."""

from __future__ import annotations

from pathlib import Path

import click

from wbmigrate.cli.base import examples, status
from wbmigrate.cli.options import flag
from wbmigrate.live.planfile import load_plan, saved_report
from wbmigrate.redact import printable
from wbmigrate.report import plan as plan_report

RENDER = {
    "text": plan_report.to_text,
    "markdown": plan_report.to_markdown,
    "json": lambda plan, verbose: plan_report.to_json(plan),  # JSON always has every object
}


@click.command(
    epilog=examples(
        "wbmigrate show plan.json",
        "wbmigrate show plan.json --format markdown > plan.md",
        "wbmigrate show plan.json --format json | jq '.summary'",
    ),
)
@click.argument("plan_path", metavar="PLAN.json")
@click.option("--format", "format_", type=click.Choice(list(RENDER)), default="text")
@flag("--verbose", "-v", "Also show unchanged objects and info notes.")
def show(plan_path: str, format_: str, verbose: bool) -> None:
    """Show a plan saved by `plan --out`, as `plan` showed it; W&B is not contacted.

    The report is the one `plan` printed for the same objects when it saved the file, in the
    same formats: `--format json` prints the same document as `plan --format json`. It shows
    the project as it was then; `apply --plan` skips what changed since.

    Exit code: 0 when shown, 2 when the file cannot be read or is no saved plan (one line).
    """
    saved = load_plan(Path(plan_path))
    status(f"Saved plan for {printable(saved.target)} (W&B not contacted).")
    click.echo(RENDER[format_](saved_report(saved), verbose), nl=False)
