"""`wbmigrate verify`: after a migration, check that it holds, for live projects or files."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from wbmigrate.cli.base import UserError, examples, finish, interruptible, status
from wbmigrate.cli.options import (
    Connection,
    connection_options,
    flag,
    live_options,
    migration_options,
    migration_setup,
)
from wbmigrate.cli.project import (
    connect,
    live_targets,
    one_project,
    picked,
    read_history,
    tell_found,
)
from wbmigrate.engine.model import Options
from wbmigrate.errors import WbmigrateError
from wbmigrate.files import read_sources
from wbmigrate.live.baseline import Baseline, load_baseline
from wbmigrate.live.org import resolve
from wbmigrate.live.project import Counts, Project
from wbmigrate.live.transport import ApiError
from wbmigrate.mapping import Migration
from wbmigrate.plan import Source
from wbmigrate.report import verify as verify_report
from wbmigrate.verify import Finding, Verification, Verified, findings, split_of_alerts, verify_one

FORMATS = click.Choice(list(verify_report.RENDERERS))


@click.command(
    epilog=examples(
        "wbmigrate verify my-team/my-project",
        "wbmigrate verify my-team/my-project --baseline wbmigrate-backups/my-team-my-project-...",
        "wbmigrate verify dashboards/ --mode replace --format github",
        "wbmigrate verify my-team --format sarif --exit-zero > verify.sarif",
    ),
)
@click.argument("targets", metavar="[TARGET]...", nargs=-1)
@migration_options
@click.option(
    "--baseline",
    type=click.Path(exists=True),
    metavar="DIR|PLAN",
    help="Compare with the objects before the migration: an apply run's backup folder, or a "
    "saved plan (`plan --out`).",
)
@click.option("--format", "format_", type=FORMATS, default="text")
@flag(
    "--exit-zero",
    "Exit 0 even when something does not hold (2 still means a usage, mapping, auth or "
    "connection error), as `check --exit-zero`: report in CI without failing it.",
)
@live_options
@connection_options
@interruptible("nothing written")
def verify(
    targets: tuple[str, ...],
    baseline: str | None,
    format_: str,
    exit_zero: bool,
    drafts: str,
    runs: int,
    connection: Connection,
    **setup: Any,
) -> None:
    """Check that a migration holds, and write nothing.

    TARGET as for `plan`: ENTITY/PROJECT, ENTITY, a glob, several of these, a report's or saved
    workspace's W&B URL (that object alone), or a folder or file of specs. Three checks: no old
    metric name left where --mode does not keep it (in dual mode every old key has its new
    companion; no panel or alert on a metric that is gone); metrics the mapping keeps
    `distinct` (in-flight and in-queue staleness) are still separate series (a key shown twice
    in one panel was merged; with --baseline, a panel that showed both must still show both);
    live, no panel or alert on a key no run of the project has logged (see --runs).

    Exit code: 0 when everything holds (always with --exit-zero), 1 when something does not (or
    an object could not be read), 2 on a usage, mapping, auth or connection error or an
    unusable --baseline.
    """
    migration, options = migration_setup(**setup)
    base = _baseline(baseline, migration)
    against = base.source if base else ""
    if len(targets) == 1 and targets[0] and Path(targets[0]).exists():
        from wbmigrate.check.configs import verify_configs  # check's rules: for files only

        folder = Path(targets[0])
        verified = [verify_one(s, migration, options) for s in read_sources(folder, ())]
        specs = {v.source.origin for v in verified}
        found = findings(verified, verify_configs(folder, migration, options, status, specs))
        run = Verification(targets[0], verified, found, against, files=True)
    else:
        label, verified, found = _live(targets, migration, options, base, drafts, runs, connection)
        run = Verification(label, verified, found, against, files=False)
    click.echo(verify_report.RENDERERS[format_](run), nl=False)
    if format_ in ("sarif", "github", "json"):
        status(verify_report.summary(run))
    finish(failed=not run.holds and not exit_zero)


def _baseline(path: str | None, migration: Migration) -> Baseline | None:
    if path is None:
        return None
    try:
        return load_baseline(Path(path), migration)
    except WbmigrateError as exc:
        raise UserError(f"--baseline {path}: {exc}") from None


def _live(
    targets: tuple[str, ...],
    migration: Migration,
    options: Options,
    base: Baseline | None,
    drafts: str,
    runs: int,
    connection: Connection,
) -> tuple[str, list[Verified], list[Finding]]:
    selectors = live_targets(targets)
    many = one_project(selectors) is None
    client = connect(connection)
    projects = resolve(client, selectors)  # one project: no request
    label = ", ".join(map(str, selectors))
    if base is not None:
        try:
            base.check_host(client.base_url)
        except WbmigrateError as exc:
            raise UserError(f"--baseline: {exc}") from None
    status(f"Verifying {label} on {client.base_url} ...")
    verified: list[Verified] = []
    found: list[Finding] = []
    for entity, name in projects:
        project = Project(client, entity, name, drafts == "migrate", picked())
        try:
            done, more = _project(project, migration, options, base, runs)
        except ApiError as exc:
            if not many:
                raise
            # One project that cannot be read (a 403) is reported; the others are verified.
            where = Source(project.target, project.target)
            done, more = [Verified(where, f"project {project.target}", error=str(exc))], []
        if many:
            more = [replace(f, title=f"{project.target} › {f.title}") for f in more]
        verified += done
        found += more
    return label, verified, found


def _project(
    project: Project, migration: Migration, options: Options, base: Baseline | None, runs: int
) -> tuple[list[Verified], list[Finding]]:
    own, _ = read_history(project, migration, options, runs)
    census = Counts()
    done = [
        verify_one(obj.source(), migration, own, base.views.get(obj.id) if base else None)
        for obj in project.read(census)
    ]
    tell_found(census, project.drafts)
    alerts = split_of_alerts(done, base.alerts, migration) if base else iter(())
    return done, findings(done, alerts)
