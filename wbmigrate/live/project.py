"""The pipeline of a live project, as library functions: read its objects and its key
census (`with_history`), walk the objects that arrive while the census is read
(`walk_ahead`), and plan each object as it arrives (`plan_project`, streaming, optionally into
a saved plan). `plan` and `apply` share it (`live.prepare` works out what
`apply` must write); the CLI only parses, calls and prints.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from wbmigrate.engine.history import history_of
from wbmigrate.engine.model import Options
from wbmigrate.live.census import read_run_keys
from wbmigrate.live.client import Client
from wbmigrate.live.listing import fetch_project
from wbmigrate.live.objects import LiveObject
from wbmigrate.live.planfile import PlanFile
from wbmigrate.live.shapes import GraphQLError, ShapeError
from wbmigrate.plan import Planned, finish_one, plan_one, walk_one
from wbmigrate.rewrite import Walked

if TYPE_CHECKING:
    from wbmigrate.mapping import Migration

T = TypeVar("T")

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


Ahead = tuple[LiveObject, "Walked | Planned"]  # an object walked before the census came


def plan_project(
    project: Project,
    migration: Migration,
    options: Options,
    counts: Counts | None = None,
    out: Path | None = None,
    objects: Iterator[LiveObject] | None = None,
    ahead: Iterable[Ahead] = (),
) -> Iterator[Planned]:
    """Each object planned as it arrives, then let go, so memory stays flat. With `out`, the
    plan is also saved there for `apply --plan`; only a plan read to the end is saved.
    `objects`: the project's objects, already being read (else they are read now, counted
    into `counts`); `ahead`: those of them walked before the census came (`walk_ahead`)."""
    saved = PlanFile(out, migration, options, project.target, project.drafts) if out else None
    early = ((obj, _finished(obj, walked, migration, options)) for obj, walked in ahead)
    rest = objects if objects is not None else project.read(counts)
    later = ((obj, plan_one(obj.source(), migration, options)) for obj in rest)
    try:
        for obj, planned in itertools.chain(early, later):
            if saved is not None:
                saved.add(planned, obj)
            yield planned
    except BaseException:  # an error, or a consumer that stopped early
        if saved is not None:
            saved.discard()
        raise
    if saved is not None:
        saved.close()


def walk_ahead(
    objects: Iterator[LiveObject], migration: Migration, options: Options, census: Future[Any]
) -> list[Ahead]:
    """The objects that arrive while the key census is read, walked meanwhile: the census is
    needed only to finish them (`plan_project`). Planning is most of a live plan's CPU, and
    the census its longest wait: at 100 ms per request, walking during it takes the plan of
    500 views + 100 automations from 1.41x its floor to about 1.1x (benchmarks/README.md)."""
    ahead: list[Ahead] = []
    while not census.done() and (obj := next(objects, None)) is not None:
        ahead.append((obj, walk_one(obj.source(), migration, options)))
    return ahead


def _finished(
    obj: LiveObject, walked: Walked | Planned, migration: Migration, options: Options
) -> Planned:
    """An object walked ahead, finished with the census in `options`; walked again when it
    judged a regex against the keys known before the census's came."""
    if isinstance(walked, Walked) and walked.judged_regex and options.history is not None:
        return plan_one(obj.source(), migration, options)
    return finish_one(obj.source(), walked, options.history)


def in_background(work: Callable[[], T]) -> Future[T]:
    """`work()` in a thread of its own, which nothing waits for at exit (an error or Ctrl-C
    in the main thread never waits on a request of it)."""
    future: Future[T] = Future()

    def run() -> None:
        try:
            future.set_result(work())
        except BaseException as exc:  # given to whoever asks for the result
            future.set_exception(exc)

    threading.Thread(target=run, daemon=True).start()
    return future
