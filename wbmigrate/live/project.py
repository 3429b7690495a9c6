"""The pipeline of a live project, as library functions: read its objects and its key
census (`with_history`), and plan each object as it arrives (`plan_project`, streaming,
optionally into a saved plan). `plan` and `apply` share it (`live.prepare` works out what
`apply` must write); the CLI only parses, calls and prints.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from wbmigrate.engine.history import history_of
from wbmigrate.engine.model import Options
from wbmigrate.live.census import read_run_keys
from wbmigrate.live.client import Client
from wbmigrate.live.listing import fetch_project
from wbmigrate.live.objects import LiveObject
from wbmigrate.live.planfile import PlanFile
from wbmigrate.live.shapes import GraphQLError, ShapeError
from wbmigrate.plan import Planned, plan_one

if TYPE_CHECKING:
    from wbmigrate.mapping import Migration

# What a TARGET may be (`ENTITY`, `ENTITY/PROJECT`, `ENTITY/GLOB`): `live.org` reads patterns.
NAME = r"[\w-][\w.-]*"  # no leading dot: never `..`
PATTERN = re.compile(
    rf"(?:wandb://)?(?P<entity>{NAME})(?:/(?P<project>[\w*?\[-][\w.*?\[\]!-]*))?/?\Z"
)
GLOB = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class Selector:
    """What one TARGET asks for: a project, every project of an entity, or a glob over them."""

    entity: str
    project: str | None = None  # None: all

    @property
    def is_pattern(self) -> bool:
        return self.project is None or bool(GLOB.search(self.project))

    def __str__(self) -> str:
        return f"{self.entity}/{self.project}" if self.project else self.entity


def selector(text: str) -> Selector | None:
    """`ENTITY`, `ENTITY/PROJECT` or `ENTITY/GLOB` (`team/qwen3-*`), else None."""
    match = PATTERN.match(text)
    if match is None:
        return None
    return Selector(match["entity"], match["project"])


@dataclass
class Counts:
    """What a project held, counted as its objects stream past."""

    reports: int = 0
    drafts: int = 0  # of the reports
    workspaces: int = 0
    automations: int = 0

    def add(self, obj: LiveObject) -> LiveObject:
        if obj.kind == "report":
            self.reports += 1
            self.drafts += obj.is_draft
        elif obj.kind == "workspace":
            self.workspaces += 1
        else:
            self.automations += 1
        return obj


@dataclass(frozen=True)
class Project:
    """One live project, read through one client: published reports, their drafts (unless
    `drafts` is off), saved workspaces and the automations scoped to it."""

    client: Client
    entity: str
    project: str
    drafts: bool = True

    @property
    def target(self) -> str:
        return f"{self.entity}/{self.project}"

    def read(self, counts: Counts | None = None) -> Iterator[LiveObject]:
        """Every object, as it arrives (the first requests are out when this returns); counted
        into `counts`."""
        found = fetch_project(self.client, self.entity, self.project, drafts=self.drafts)
        return map(counts.add, found) if counts is not None else found


def with_history(
    project: Project, migration: Migration, options: Options, runs: int, cache: Path | None
) -> tuple[Options, str | None]:
    """`options` with the project's key census (its `runs` newest runs), and why there is
    none when W&B could not give it (a server without the runs API): the plan goes on without
    a boundary or blank-panel warnings, and says so. A refused key or a missing project is an
    error here as it would be a moment later."""
    if runs == 0:
        return options, None
    try:
        keys, total = read_run_keys(project.client, project.entity, project.project, runs, cache)
    except (GraphQLError, ShapeError) as exc:
        return options, f"the runs of {project.target} could not be read ({exc})"
    return replace(options, history=history_of(keys, migration, total)), None


def plan_project(
    project: Project,
    migration: Migration,
    options: Options,
    counts: Counts | None = None,
    out: Path | None = None,
    objects: Iterator[LiveObject] | None = None,
) -> Iterator[Planned]:
    """Each object planned as it arrives, then let go, so memory stays flat. With `out`, the
    plan is also saved there for `apply --plan`; only a plan read to the end is saved.
    `objects`: the project's objects, already being read (else they are read now, counted
    into `counts`)."""
    host = project.client.base_url
    saved = PlanFile(out, migration, options, project.target, project.drafts, host) if out else None
    try:
        for obj in objects if objects is not None else project.read(counts):
            planned = plan_one(obj.source(host), migration, options)
            if saved is not None:
                saved.add(planned, obj)
            yield planned
    except BaseException:  # an error, or a consumer that stopped early
        if saved is not None:
            saved.discard()
        raise
    if saved is not None:
        saved.close()
