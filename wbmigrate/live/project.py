"""The pipeline of a live project, as library functions: read its objects and its key
census, and plan each object as it arrives (`plan_project`, streaming, optionally into a saved
plan). `plan` and `apply` share it (`live.prepare` works out what `apply` must write); the CLI
only parses, calls and prints.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from wbmigrate.engine.history import history_of
from wbmigrate.live.census import read_run_keys
from wbmigrate.live.client import Client
from wbmigrate.live.listing import fetch_project
from wbmigrate.live.objects import LiveObject
from wbmigrate.live.planners import Planners
from wbmigrate.live.shapes import GraphQLError, ShapeError

if TYPE_CHECKING:  # the plan's data model loads with the mapping, after the first requests
    from wbmigrate.engine.model import Options
    from wbmigrate.live.planfile import PlanFile
    from wbmigrate.mapping import Migration
    from wbmigrate.plan import Planned

T = TypeVar("T")
R = TypeVar("R")
TARGET = re.compile(r"(?:wandb://)?(?P<entity>[\w.-]+)/(?P<project>[\w.-]+)/?\Z")
# What a TARGET of several projects may be (`ENTITY`, `ENTITY/GLOB`): `live.org` reads them;
# here, as `plan` asks whether its one TARGET is such before its first request.
NAME = r"[\w-][\w.-]*"  # no leading dot: never `..`
PATTERN = re.compile(
    rf"(?:wandb://)?(?P<entity>{NAME})(?:/(?P<project>[\w*?\[-][\w.*?\[\]!-]*))?/?\Z"
)
GLOB = re.compile(r"[*?\[]")


def parse_target(target: str) -> tuple[str, str] | None:
    """`ENTITY/PROJECT` or `wandb://ENTITY/PROJECT`, else None."""
    match = TARGET.match(target)
    return (match["entity"], match["project"]) if match else None


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
class Census:
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

    def read(self, census: Census | None = None) -> Iterator[LiveObject]:
        """Every object, as it arrives (the first requests are out when this returns); counted
        into `census`."""
        found = fetch_project(self.client, self.entity, self.project, drafts=self.drafts)
        return map(census.add, found) if census is not None else found


def census_while(
    project: Project, census: Census, work: Callable[[], T], after: AfterCensus | None = None
) -> tuple[Future[T], Iterator[LiveObject]]:
    """`work()` (the key census) in a thread of its own, started with the project's listings
    (their first requests are on their way when this returns): its future result, and the
    objects, to plan while it reads. A project that cannot be read fails on its listings, as
    before: the census's error is only raised where its result is asked for. What `work` puts
    in `after` (the census cache's write) is done once its result is out."""
    objects = project.read(census)
    future: Future[T] = Future()
    in_background(work, future, after or AfterCensus())
    return future, objects


@dataclass
class AfterCensus:
    """What the census thread does once its result is out (the cache's write, which the plan
    need not wait for); the command waits for it at its end, so the next one finds the
    cache."""

    steps: list[Callable[[], None]] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        try:
            for step in self.steps:
                step()
        finally:
            self.done.set()

    def wait(self) -> None:
        self.done.wait(CACHE_WAIT)


CACHE_WAIT = 30.0  # seconds a command waits at its end for the census cache to be written


def in_background(work: Callable[[], T], future: Future[T], after: AfterCensus) -> None:
    """`work()` on a daemon thread (Ctrl-C never waits for it), its result into `future`,
    then what it left for `after`."""

    def run() -> None:
        try:
            future.set_result(work())
        except BaseException as exc:  # raised where the result is asked for
            future.set_exception(exc)
        after.run()

    threading.Thread(target=run, name="census", daemon=True).start()


def done(value: T) -> Future[T]:
    future: Future[T] = Future()
    future.set_result(value)
    return future


def with_history(
    project: Project, migration: Migration, options: Options, runs: int, cache: Path | None
) -> tuple[Options, str | None]:
    """`options` with the project's key census (its `runs` newest runs), and why there is
    none when W&B could not give it (a server without the runs API): the plan goes on without
    a boundary or blank-panel warnings, and says so. A refused key or a missing project is an
    error here as it would be a moment later."""
    return census_of(project, lambda: (migration, options), runs, cache)


def census_of(
    project: Project,
    setup: Callable[[], tuple[Migration, Options]],
    runs: int,
    cache: Path | None,
    after: AfterCensus | None = None,
) -> tuple[Options, str | None]:
    """`with_history`, the migration and options taken from `setup()` once the runs are read:
    a live plan reads them while it reads the mapping. `after`: see `read_run_keys`."""
    if runs == 0:
        return setup()[1], None
    try:
        keys, total = read_run_keys(
            project.client,
            project.entity,
            project.project,
            runs,
            cache,
            after.steps if after else None,
        )
    except (GraphQLError, ShapeError) as exc:
        return setup()[1], f"the runs of {project.target} could not be read ({exc})"
    migration, options = setup()
    return replace(options, history=history_of(keys, migration, total)), None


# Spec text planned ahead of the key census at most: each such object holds its parsed spec
# (about six times its text) until the census is known (about 1 s), so memory stays bounded on
# a project of any size. 8 MB, not 12: a plan is no slower, and a project of 11 MB of specs no
# longer peaks lower or higher by when its census lands (see README, Performance).
EARLY_BYTES = 8 * 1024 * 1024


def plan_project(
    project: Project,
    migration: Migration,
    options: Options,
    census: Census | None = None,
    out: Path | None = None,
    objects: Iterator[LiveObject] | None = None,
    later: Future[Options] | None = None,
    planners: Planners | None = None,
) -> Iterator[Planned]:
    """Each object planned as it arrives, then let go, so memory stays flat. `later`: the
    options with the project's key census, still reading (see `census_while`): objects that
    arrive meanwhile are planned as far as `options` take them, and finished once it is
    known. With `out`, the plan is also saved there for `apply --plan`; only a plan read to
    the end is saved. `objects`: the project's objects, already being read; `planners`:
    worker processes to plan them in (the same plans)."""
    from wbmigrate import plan  # loaded by then: the first requests are out

    final = later or done(options)
    saved: PlanFile | None = None
    try:
        found = objects if objects is not None else project.read(census)
        planned_objects = (
            planners.plan(found, final, EARLY_BYTES)
            if planners is not None
            else overlap(
                found,
                final,
                lambda obj: plan.plan_early(obj.source(), migration, options),
                lambda obj, given: plan.plan_one(obj.source(), migration, given),
            )
        )
        first = list(itertools.islice(planned_objects, 1))  # the census is known after it
        if out is not None:  # the saved plan starts with the census
            from wbmigrate.live.planfile import PlanFile  # loaded only to save a plan

            saved = PlanFile(out, migration, final.result(), project.target, project.drafts)
        for obj, planned in itertools.chain(first, planned_objects):
            if saved is not None:
                saved.add(planned, obj)
            yield planned
    except BaseException:  # an error, or a consumer that stopped early
        if saved is not None:
            saved.discard()
        raise
    if saved is not None:
        saved.close()


def overlap(
    objects: Iterator[LiveObject],
    options: Future[Options],
    early: Callable[[LiveObject], Callable[[Options], R]],
    now: Callable[[LiveObject, Options], R],
) -> Iterator[tuple[LiveObject, R]]:
    """Each object with its plan, in order: begun with `early` (up to EARLY_BYTES of specs)
    while the census reads, and finished with its result; planned `now` once it is known."""
    waiting: deque[tuple[LiveObject, Callable[[Options], R]]] = deque()
    held = 0

    def settled() -> Iterator[tuple[LiveObject, R]]:
        final = options.result()  # waits for the census
        while waiting:
            obj, finish = waiting.popleft()
            yield obj, finish(final)

    for obj in objects:
        if not options.done() and held < EARLY_BYTES:
            waiting.append((obj, early(obj)))
            held += len(obj.text)
            continue
        yield from settled()
        yield obj, now(obj, options.result())
    yield from settled()
