"""An organisation at once: TARGETs that name several projects (`ENTITY`, `ENTITY/GLOB`, or a
list of `ENTITY/PROJECT`s), read with bounded concurrency, and one backup folder for a run that
writes to many of them (a sub-folder per project, itself a whole backup, and one journal of the
run across projects).

One project that cannot be read (a 403, a project gone) never stops the others: it is reported
with its reason, and the rest go on.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from wbmigrate.engine.model import Options
from wbmigrate.errors import WbmigrateError
from wbmigrate.live.backup import BackupError
from wbmigrate.live.client import PAGE_SIZE, Client
from wbmigrate.live.project import NAME, Counts, Project, Selector, plan_project, with_history
from wbmigrate.live.shapes import a_dict, listing_pages
from wbmigrate.live.transport import ApiError
from wbmigrate.plan import Planned, Tally

if TYPE_CHECKING:
    from wbmigrate.live.prepare import Work
    from wbmigrate.mapping import Migration

R = TypeVar("R")

PROJECT_JOBS = 4  # projects read at once

LIST_PROJECTS = """
query WbmigrateProjects($entity: String!, $first: Int!, $after: String) {
  models(entityName: $entity, first: $first, after: $after) {
    edges { node { name entityName } cursor }
    pageInfo { endCursor hasNextPage }
  }
}"""


class TargetError(WbmigrateError):
    """A TARGET that names no project (the CLI says it in one line, as any other)."""


def resolve(client: Client, selectors: Iterable[Selector]) -> list[tuple[str, str]]:
    """The projects the selectors name, in the order given (each once). An entity's projects
    are listed once, however many selectors need them; a pattern that matches none is a
    `TargetError`, so a typo never passes for an empty organisation."""
    listed: dict[str, list[str]] = {}
    found: dict[tuple[str, str], None] = {}
    for chosen in selectors:
        if not chosen.is_pattern:
            assert chosen.project is not None
            found[(chosen.entity, chosen.project)] = None
            continue
        if chosen.entity not in listed:
            listed[chosen.entity] = list(projects(client, chosen.entity))
        pattern = chosen.project or "*"
        matched = [p for p in listed[chosen.entity] if fnmatch.fnmatchcase(p, pattern)]
        if not matched:
            raise TargetError(f"{chosen}: no project of {chosen.entity} matches")
        found.update(dict.fromkeys((chosen.entity, p) for p in matched))
    return list(found)


def projects(client: Client, entity: str) -> Iterator[str]:
    """The names of every project of `entity` that the key can see, page by page."""

    def page(after: str | None) -> dict[str, Any]:
        variables = {"entity": entity, "first": PAGE_SIZE, "after": after}
        return a_dict(client.execute(LIST_PROJECTS, variables).get("models"), "models")

    for edges in listing_pages(page, f"projects of {entity}"):
        for edge in edges:
            node = edge.get("node") if isinstance(edge, dict) else None
            name = node.get("name") if isinstance(node, dict) else None
            if isinstance(name, str) and re.fullmatch(NAME, name):
                yield name


@dataclass(frozen=True)
class Result:
    """One project's part of an organisation run: its value, or why it failed."""

    target: str
    value: Any = None
    error: str | None = None


def each_project(
    targets: list[tuple[str, str]], work: Callable[[str, str], R], jobs: int = PROJECT_JOBS
) -> list[Result]:
    """`work(entity, project)` for every project, `jobs` at a time, results in target order.
    An API or backup error fails that project alone; anything else (a bug, Ctrl-C) is
    raised."""

    def one(target: tuple[str, str]) -> Result:
        name = "/".join(target)
        try:
            return Result(name, work(*target))
        except (ApiError, BackupError) as exc:
            return Result(name, error=str(exc))

    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(targets)))) as pool:
        return list(pool.map(one, targets))


# --- planning many projects -------------------------------------------------------------------


@dataclass(frozen=True)
class ProjectPlan:
    """One project planned: its options (with its census), what it held, the tally, what
    `render` made of its objects, and why it has no census (if so)."""

    target: str
    options: Options
    found: Counts
    tally: Tally
    rendered: Any
    problem: str | None = None


def plan_projects(
    client: Client,
    targets: list[tuple[str, str]],
    migration: Migration,
    options: Options,
    render: Callable[[Options, Iterator[Planned]], Any],
    drafts: bool = True,
    runs: int = 0,
    cache: Path | None = None,
) -> list[Result]:
    """Plan every project, `PROJECT_JOBS` at a time; each project's objects are rendered as they are
    planned and let go, so memory holds one rendering per project, not its specs."""

    def one(entity: str, name: str) -> ProjectPlan:
        project = Project(client, entity, name, drafts)
        own, problem = with_history(project, migration, options, runs, cache)
        found, tally = Counts(), Tally()
        planned = plan_project(project, migration, own, found)
        rendered = render(own, map(tally.add, planned))
        return ProjectPlan(project.target, own, found, tally, rendered, problem)

    return each_project(targets, one)


# --- applying to many projects ----------------------------------------------------------------


@dataclass(frozen=True)
class Prepared:
    """One project read and planned for apply: its options (with its key census) and what
    its run must write."""

    project: Project
    options: Options
    work: Work


def prepare_projects(
    client: Client,
    targets: list[tuple[str, str]],
    migration: Migration,
    options: Options,
    drafts: bool,
    runs: int,
    cache: Path | None,
    warn: Callable[[str], None],
    shown: bool = False,
) -> list[Result]:
    """Read and plan every project for apply, `PROJECT_JOBS` at a time; `warn` hears why a
    project has no key census; `shown`: each keeps its objects' plans (`prepare_apply`)."""
    from wbmigrate.live.prepare import prepare_apply

    def one(entity: str, name: str) -> Prepared:
        project = Project(client, entity, name, drafts)
        own, problem = with_history(project, migration, options, runs, cache)
        if problem:
            warn(f"Warning: {problem}")
        work = prepare_apply(project, migration, own, None, Counts(), shown=shown)
        return Prepared(project, own, work)

    return each_project(targets, one)
