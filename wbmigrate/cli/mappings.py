"""`wbmigrate mappings list | show | validate | infer | diff`."""

from __future__ import annotations

import re
from pathlib import Path

import click

from wbmigrate.cli.base import Group, examples, finish, warn
from wbmigrate.cli.options import flag
from wbmigrate.errors import WbmigrateError
from wbmigrate.mapping import MappingError
from wbmigrate.mapping.load import bundled_ids, find_mapping, load_mapping
from wbmigrate.report import mapping_table
from wbmigrate.report.words import plural


@click.group(cls=Group)
def mappings() -> None:
    """List, show and validate mapping files. Infer one from git history, compare two."""


@mappings.command(
    "list", epilog=examples("wbmigrate mappings list", "wbmigrate mappings list --long")
)
@flag("--long", "-l", "long_", "Also print versions and title.")
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
)
def mappings_show(mapping: str, start: str | None, to: str | None, format_: str) -> None:
    """Print the rename and removal table of a mapping, composed over its steps.

    Chains collapse: a metric renamed in one step and again in a later one shows its final
    name; a metric renamed and later removed shows as removed. The mapping's distinct groups
    (series never merged into one) follow, each metric with its other names.
    """
    loaded = find_mapping(mapping)
    migration = loaded.migration(start, to)
    render = getattr(mapping_table, f"to_{format_}")  # the --format choices name its writers
    click.echo(render(loaded, migration), nl=False)
    warn(loaded.warnings)


@mappings.command(
    "validate",
    epilog=examples(
        "wbmigrate mappings validate my-mapping.yaml", "wbmigrate mappings validate mappings/*.yaml"
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
            f"{plural(renamed, 'old metric name')}, latest {mapping.versions[-1]})"
        )
    finish(error=failed)


@mappings.command(
    "infer",
    epilog=examples(
        "wbmigrate mappings infer ../prime-rl --from 0630b7bff --to 2441fd514",
        "wbmigrate mappings infer ../trainer --from v1.0 --to main --path 'src/*' --out draft.yaml",
    ),
)
@click.argument("repo", type=click.Path(file_okay=False, path_type=Path))
@click.option("--from", "start", required=True, metavar="REV", help="First commit to read.")
@click.option("--to", required=True, metavar="REV", help="Last commit to read.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write here.")
@click.option(
    "--path",
    "paths",
    multiple=True,
    metavar="GLOB",
    help="Read only Python files matching GLOB ('*' crosses '/'); repeatable.",
)
@click.option("--url", help="The repository's web address (default: its GitHub origin).")
@click.option("--format", "format_", type=click.Choice(["yaml", "json"]), default="yaml")
def mappings_infer(
    repo: Path,
    start: str,
    to: str,
    out: Path | None,
    paths: tuple[str, ...],
    url: str | None,
    format_: str,
) -> None:
    """Draft a mapping from a git repository's history: the W&B keys and config fields each
    commit of the main line, FROM (included) to TO, renamed or removed.

    Reads the repository through git (no checkout, nothing in it changes). Each entry carries
    its evidence as comments; `# review:` marks every pair that is not one key replaced in one
    function. Review the draft, then `mappings validate` and `mappings diff` it.
    """
    from wbmigrate.check.infer import infer, repository_url
    from wbmigrate.mapping.draft_file import to_json, to_yaml
    from wbmigrate.mapping.infer import draft
    from wbmigrate.safe_write import write_text

    steps = draft(infer(repo, start, to, paths))
    url = (url or repository_url(repo) or "").rstrip("/")
    if not url.startswith(("https://", "http://")):
        raise WbmigrateError(f"{repo} has no GitHub origin: give its web address with --url")
    ident = re.sub(r"[^a-z0-9._-]", "-", url.rpartition("/")[2].lower()).strip("-.") or "inferred"
    render = to_json if format_ == "json" else to_yaml
    text = render(steps, url, ident, f"{start}..{to}")
    written = sum(1 for step in steps if step.entries)
    if not written:
        click.echo(f"Found no renamed or removed key from {start} to {to}.", err=True)
        return
    if out is None:
        click.echo(text, nl=False)
        return
    write_text(out, text)
    click.echo(f"Wrote {out}: {plural(written, 'step')} to review.", err=True)


@mappings.command("diff", epilog=examples("wbmigrate mappings diff prime-rl draft.yaml"))
@click.argument("first", metavar="A")
@click.argument("second", metavar="B")
def mappings_diff(first: str, second: str) -> None:
    """Compare two mappings (a bundled id or a file each) step by step; exit 1 if they differ.

    Steps are matched by their source link (else by version). `-` marks an entry only in A,
    `+` one only in B, `!` one the two disagree on.
    """
    from wbmigrate.mapping.diff import diff

    a, b = find_mapping(first), find_mapping(second)
    lines = diff(a, b)
    for line in lines:
        click.echo(line)
    click.echo(f"{first} and {second} " + ("differ." if lines else "agree."))
    finish(failed=bool(lines))
