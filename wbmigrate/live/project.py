"""The pipeline of a live project, as library functions: read its objects and its key
census (`with_history`), walk each object as it arrives, the census read meanwhile
(`walking`, `meanwhile`), and finish its plan (`plan_project`, streaming, optionally into a
saved plan). `plan` and `apply` share it (`live.prepare` works out what
`apply` must write); the CLI only parses, calls and prints.
"""

from __future__ import annotations

import difflib
import itertools
import re
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from wbmigrate.engine.history import history_of
from wbmigrate.engine.model import Options
from wbmigrate.errors import WbmigrateError
from wbmigrate.live.census import read_run_keys
from wbmigrate.live.client import PAGE_SIZE, Client
from wbmigrate.live.listing import fetch_project
from wbmigrate.live.objects import LiveObject
from wbmigrate.live.planfile import PlanFile
from wbmigrate.live.shapes import GraphQLError, NotFoundError, ShapeError, a_dict, listing_pages
from wbmigrate.live.transport import ApiError
from wbmigrate.parallel import cores, uninterrupted
from wbmigrate.plan import Planned, Source, finish_one, light, walk_one

if TYPE_CHECKING:
    from wbmigrate.mapping import Migration
    from wbmigrate.rewrite import Walked

T = TypeVar("T")
# An object, and its walk: done (its plan unfinished), or still to do
Walking = tuple[LiveObject, Source, "Walked | Planned | Callable[[], Walked | Planned]"]

# What a TARGET may be (`ENTITY`, `ENTITY/PROJECT`, `ENTITY/GLOB`): `live.org` reads patterns.
NAME = r"[\w-][\w.-]*"  # no leading dot: never `..`
PATTERN = re.compile(
    rf"(?:wandb://)?(?P<entity>{NAME})(?:/(?P<project>[\w*?\[-][\w.*?\[\]!-]*))?/?\Z"
)
GLOB = re.compile(r"[*?\[]")
SUGGEST_FROM = 10 * PAGE_SIZE  # an entity's projects read for a "did you mean", at most
LARGE = 1000  # objects planned in this process before the rest go to `live.pool`'s workers

LIST_PROJECTS = """
query WbmigrateProjects($entity: String!, $first: Int!, $after: String) {
  models(entityName: $entity, first: $first, after: $after) {
    edges { node { name entityName } cursor }
    pageInfo { endCursor hasNextPage }
  }
}"""


class TargetError(WbmigrateError):
    """A TARGET or `--only` that names nothing (the CLI says it in one line, as any other)."""


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


@dataclass(frozen=True)
class Pick:
    """An object `--only` or a URL TARGET asks for: by its exact title or its id (`value`; a
    draft goes with its report), or a saved workspace by its view name (`view_names`, from its
    URL's `?nw=ID`: W&B names the view `nw-ID-v`, or sometimes `ID`). `label`: as given."""

    label: str
    value: str = ""
    view_names: tuple[str, ...] = ()

    def matches(self, obj: LiveObject) -> bool:
        view = obj.view
        if self.view_names:
            return view is not None and view.name in self.view_names
        return self.value in (obj.id, obj.title) or (
            view is not None and view.parent_id == self.value
        )


def chosen(
    objects: Iterable[LiveObject], picks: tuple[Pick, ...], target: str
) -> Iterator[LiveObject]:
    """The objects `picks` name, once the whole listing has been read (the others are let go
    as they arrive): a pick that names none is a `TargetError`, before anything is planned,
    with the titles closest to it."""
    kept, titles, hit = [], set(), set()
    for obj in objects:
        titles.add(obj.title)
        found = {pick for pick in picks if pick.matches(obj)}
        if found:
            kept.append(obj)
            hit |= found
    missing = [pick for pick in picks if pick not in hit]
    if missing:
        raise TargetError("\n".join(_nothing(pick, titles, target) for pick in missing))
    yield from kept


def _nothing(pick: Pick, titles: set[str], target: str) -> str:
    if pick.view_names:
        return f"{pick.label}: {target} has no saved workspace of that URL"
    what = "report, workspace or automation of that title or id"
    return f"{pick.label}: {target} has no {what}" + _did_you_mean(pick.value, titles)


def _did_you_mean(name: str, names: Iterable[str], prefix: str = "") -> str:
    close = difflib.get_close_matches(name, list(names), n=3) if name else []
    return f"; did you mean {' or '.join(repr(prefix + c) for c in close)}?" if close else ""


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
    only: tuple[Pick, ...] = ()  # these objects alone (none: all)

    @property
    def target(self) -> str:
        return f"{self.entity}/{self.project}"

    def read(self, counts: Counts | None = None) -> Iterator[LiveObject]:
        """Every object (or those `only` picks), as it arrives (the first requests are out
        when this returns); counted into `counts`."""
        found: Iterable[LiveObject] = fetch_project(
            self.client, self.entity, self.project, drafts=self.drafts
        )
        if self.only:
            found = chosen(found, self.only, self.target)
        found = self._or_close_names(found)
        return map(counts.add, found) if counts is not None else found

    def _or_close_names(self, objects: Iterable[LiveObject]) -> Iterator[LiveObject]:
        try:
            yield from objects
        except NotFoundError as exc:
            raise self.not_found(exc) from None

    def not_found(self, exc: NotFoundError) -> NotFoundError:
        """`exc`, with the entity's projects closest to this one's name when it has none of
        that name (`async_rl` for `async-rl`); as it was when they cannot be listed."""
        try:
            names = list(itertools.islice(projects(self.client, self.entity), SUGGEST_FROM))
        except ApiError:
            return exc
        if self.project in names:
            return exc
        close = _did_you_mean(self.project, names, f"{self.entity}/")
        return NotFoundError(f"{exc}{close}", exc.status) if close else exc


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
    except NotFoundError as exc:
        raise project.not_found(exc) from None
    return replace(options, history=history_of(keys, migration, total)), None


def walking(
    objects: Iterable[LiveObject], migration: Migration, options: Options, host: str
) -> Iterator[Walking]:
    """Each object as it arrives, with its walk to do (`plan.walk_one`), for `meanwhile` or
    `plan_project`."""
    for obj in objects:
        source = obj.source(host)
        yield obj, source, partial(walk_one, source, migration, options)


def meanwhile(wait: Callable[[], T], walked: Iterator[Walking]) -> tuple[T, Iterator[Walking]]:
    """`wait()` (the key census) on a thread of its own while `walked` (objects to walk) are
    taken and walked as they come: what it returns, and `walked`, those taken first (held
    without their parsed specs, `plan.light`). An error of `wait()` is raised here, and one of
    `walked` where it came, as if `wait()` had been called first.
    A live plan walks so while the census is on its way (about 0.6 s at 100 ms): the
    benchmark's plan of 500 views + 100 automations took 1.61x and 1.64x the floor instead of
    1.93x and 1.90x (`--only plan --size small --rounds 5`, twice alternating, a quiet moment
    of a shared machine: median 1.57 s against 1.81 s)."""
    census: Future[T] = Future()
    with uninterrupted():  # the thread never takes Ctrl-C (`live.pool` starts its workers so)
        threading.Thread(target=_settle, args=(census, wait), daemon=True).start()
    taken: deque[Walking] = deque()
    failed: Exception | None = None
    try:
        while not census.done():
            obj, source, walk = next(walked)
            taken.append((obj, source, light(walk() if callable(walk) else walk)))
    except StopIteration:
        pass
    except Exception as exc:  # raised after the census's own error, and the items before it
        failed = exc
    return census.result(), _after(taken, failed, walked)


def _settle(future: Future[T], work: Callable[[], T]) -> None:
    try:
        future.set_result(work())
    except BaseException as exc:  # raised again by the thread that waits for it
        future.set_exception(exc)


def _after(taken: deque[T], failed: Exception | None, items: Iterator[T]) -> Iterator[T]:
    while taken:  # each let go as it is given
        yield taken.popleft()
    if failed is not None:
        raise failed
    yield from items


def plan_project(
    project: Project,
    migration: Migration,
    options: Options,
    counts: Counts | None = None,
    out: Path | None = None,
    walked: Iterator[Walking] | None = None,
) -> Iterator[Planned]:
    """Each object planned as it arrives, then let go, so memory stays flat. With `out`, the
    plan is also saved there for `apply --plan`; only a plan read to the end is saved.
    `walked`: the project's objects, already being read and walked (`walking`), finished with
    `options`' census (else they are read now, counted into `counts`). A large project's
    objects still to be walked are planned on other cores (`live.pool`), in the same order,
    their results without `original` (nothing a plan shows or saves needs it)."""
    host = project.client.base_url
    saved = PlanFile(out, migration, options, project.target, project.drafts, host) if out else None
    if walked is None:
        walked = walking(project.read(counts), migration, options, host)
    try:
        for obj, planned in _finished(walked, migration, options):
            if saved is not None:
                saved.add(planned, obj)
            yield planned
    except BaseException:  # an error, or a consumer that stopped early
        if saved is not None:
            saved.discard()
        raise
    if saved is not None:
        saved.close()


def _finished(
    walked: Iterator[Walking], migration: Migration, options: Options
) -> Iterator[tuple[LiveObject, Planned]]:
    """Each object and its plan, in order: here, or once the project proves large
    (`LARGE` objects) and for those still to be walked, by `live.pool`'s workers, given a
    second core (Linux's: `parallel.cores`). Only the main thread's plan (the one project of
    `plan`) does so: it alone handles Ctrl-C, and `live.org` plans projects side by side."""
    pooled = threading.current_thread() is threading.main_thread() and cores() >= 2
    for count, (obj, source, walk) in enumerate(walked):
        if pooled and callable(walk) and count >= LARGE:
            from wbmigrate.live import pool  # loaded by a large plan alone

            rest = ((later, its_source) for later, its_source, _ in walked)
            yield from pool.planned(itertools.chain([(obj, source)], rest), migration, options)
            return
        yield obj, finish_one(source, walk() if callable(walk) else walk, options)
