"""`wbmigrate mappings list | show | validate`."""

from __future__ import annotations

from collections.abc import Callable

import click

from wbmigrate.cli.base import CONTEXT, Group, examples, finish, warn
from wbmigrate.errors import WbmigrateError
from wbmigrate.mapping import MappingError
from wbmigrate.mapping.load import bundled_ids, find_mapping, load_mapping
from wbmigrate.report import mapping_table
from wbmigrate.report.words import plural


@click.group(cls=Group, context_settings=CONTEXT)
def mappings() -> None:
    """List, show and validate mapping files."""


@mappings.command(
    "list",
    context_settings=CONTEXT,
    epilog=examples("wbmigrate mappings list", "wbmigrate mappings list --long"),
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
    epilog=examples(
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
    name; a metric renamed and later removed shows as removed. The mapping's distinct groups
    (series never merged into one) follow, each metric with its other names.
    """
    loaded = find_mapping(mapping)
    migration = loaded.migration(start, to)
    render: Callable[..., str] = {
        "text": mapping_table.to_text,
        "json": mapping_table.to_json,
        "markdown": mapping_table.to_markdown,
    }[format_]
    click.echo(render(loaded, migration), nl=False)
    warn(loaded.warnings)


@mappings.command(
    "validate",
    context_settings=CONTEXT,
    epilog=examples(
        "wbmigrate mappings validate my-mapping.yaml",
        "wbmigrate mappings validate mappings/*.yaml",
    ),
)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
def mappings_validate(paths: tuple[str, ...]) -> None:
    """Check mapping files; exit 0 when all are valid, 2 with file:line errors otherwise.

    Warnings (such as many-to-one renames, which cannot be undone, or a distinct group naming
    a metric the mapping does not know) do not fail validation.
    """
    failed = False
    for path in paths:
        try:
            mapping = load_mapping(path)
        except WbmigrateError as exc:
            failed = True
            for problem in exc.problems if isinstance(exc, MappingError) else [exc]:
                click.echo(f"Error: {problem}", err=True)
            continue
        warn(mapping.warnings)
        renamed = len(mapping.migration().metrics)
        click.echo(
            f"{path}: valid ({mapping.id}, {plural(len(mapping.steps), 'step')}, "
            f"{plural(renamed, 'old metric name')}, latest {mapping.latest})"
        )
    finish(error=failed)
