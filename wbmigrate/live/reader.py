"""Objects as they are now, many at once, for the writes that follow at once (`Reader`)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from wbmigrate.errors import WbmigrateError
from wbmigrate.live.client import Client
from wbmigrate.live.objects import LiveObject
from wbmigrate.live.outcomes import one_line
from wbmigrate.live.shapes import GraphQLError, ShapeError
from wbmigrate.live.support import ENTITY_TRIGGERS
from wbmigrate.live.transport import ApiError

BATCH = 50  # views read in one request at most (the aliases of one query)
# The specs one batched answer may hold, as last read: an answer, whole in memory and within
# one try's timeout, is never many large specs at once (a larger spec is read alone).
BATCH_BYTES = 8 * 1024 * 1024


@dataclass
class Fresh:
    """What a read found: each object as it is now (None: gone), why one could not be read
    (one line), and the views whose batched read the server refused (to read again alone)."""

    found: dict[str, LiveObject | None] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    refused: list[LiveObject] = field(default_factory=list)

    def add(self, other: Fresh) -> Fresh:
        self.found.update(other.found)
        self.failed.update(other.failed)
        self.refused += other.refused
        return self


class Reader:
    """Objects as they are now, many at once, for writes that follow at once: views by id, up
    to `BATCH` in one request (GraphQL aliases), each project's automations by name in one
    request, and the requests of a read sent side by side on `pool`: one round trip a read
    whatever it holds. (At 100 ms a request the 500-view apply took as long with them in
    turn, 22.87 s against 22.38 s, but 91.8 s against 64.8 s with `--jobs 1`, which reads its
    view apart from the read-backs; a server that refuses batched reads takes a request per
    view.) Once the server refuses a batched read, views are read one per request for the
    rest of the run; `note` hears it once.

    Automations are read by name (the entity's, filtered: a listing of the project's would
    read them all for each batch, quadratic in their number), and matched by id. One not found
    so (renamed, gone, among more of its name) is looked for in its project's listing, which
    tells changed from gone; a server that refuses the read by name, or whose answer missed an
    automation of the name asked for, is read by listing for the rest of the run."""

    def __init__(
        self, client: Client, pool: Executor, note: Callable[[str], None] | None = None
    ) -> None:
        self.client, self._pool, self._note = client, pool, note
        self.batched = self.by_name = True  # until the server refuses batches, or names
        self._lock = threading.Lock()

    def read(self, objs: Sequence[LiveObject], apart: Sequence[LiveObject] = ()) -> Fresh:
        """`objs` and `apart` as they are now; the views of `apart` in requests of their own."""
        fresh = self._round(objs, apart)
        if fresh.refused:  # the refused batches again, a view per request
            fresh.add(self._round(fresh.refused))
            fresh.refused = []
        return fresh

    def _round(self, objs: Sequence[LiveObject], apart: Sequence[LiveObject] = ()) -> Fresh:
        parts = [_parts([o for o in group if o.view], self.batched) for group in (objs, apart)]
        tasks = [functools.partial(self._views, part) for part in parts[0] + parts[1]]
        projects: dict[tuple[str, str], list[LiveObject]] = {}
        for obj in [*objs, *apart]:
            if obj.view is None:
                projects.setdefault((obj.entity, obj.project), []).append(obj)
        tasks += [functools.partial(self._triggers, wanted) for wanted in projects.values()]
        if len(tasks) == 1:
            return tasks[0]()
        return functools.reduce(Fresh.add, self._pool.map(lambda task: task(), tasks), Fresh())

    def _views(self, part: list[LiveObject]) -> Fresh:
        try:
            if len(part) == 1:
                views = [self.client.view(part[0].id, part[0].entity, part[0].project)]
            else:
                views = self.client.views_by_id([(o.id, o.entity, o.project) for o in part])
        except WbmigrateError as exc:
            if len(part) > 1 and refuses_batches(exc):
                self._refused(exc)
                return Fresh(refused=part)
            return _failed(part, exc)
        found = zip(part, views, strict=True)
        return Fresh({o.id: LiveObject.of_view(v) if v else None for o, v in found})

    def _triggers(self, wanted: list[LiveObject]) -> Fresh:
        """The automations `wanted` (of one project): by name, the rest from its listing."""
        entity, project = wanted[0].entity, wanted[0].project
        named = [o for o in wanted if o.title] if self._by_name() else []
        found: dict[str, dict[str, Any]] = {}
        if named:
            try:
                found = self.client.triggers_named(entity, sorted({o.title for o in named}))
            except WbmigrateError as exc:
                if not (refuses_batches(exc) or isinstance(exc, ShapeError)):
                    return _failed(wanted, exc)
                self._by_listing(f"W&B refused to read automations by name ({exc})")
        fresh = {o.id: found.get(o.id) for o in wanted if o.id in found}
        rest = [o for o in wanted if o.id not in fresh]
        if rest:
            try:
                listed = {t["id"]: t for t in self.client.triggers(entity, project)}
            except WbmigrateError as exc:
                return _failed(rest, exc).add(_trigger_objects(fresh, entity, project))
            asked = {o.id for o in named}
            if any(o.id in asked and listed.get(o.id, {}).get("name") == o.title for o in rest):
                # the name asked for was there; the answer left it out
                self._by_listing("W&B's answer by name left out an automation of that name")
            fresh.update({o.id: listed.get(o.id) for o in rest})
        return _trigger_objects(fresh, entity, project)

    def _by_name(self) -> bool:
        """Whether automations are read by name: not refused, and the server reads them by
        entity (wandb's `Api.automations` asks the same feature first)."""
        if self.by_name and not self.client.support.asks("Entity.triggers"):
            self._by_listing(f"W&B does not read automations by entity ({ENTITY_TRIGGERS} is off)")
        return self.by_name

    def _by_listing(self, why: str) -> None:
        self.by_name = False
        if "Entity.triggers" not in self.client.support.refused:  # else said already
            self.client.support.say_once("by-listing", f"{why}; reading them per project")

    def _refused(self, exc: WbmigrateError) -> None:
        with self._lock:  # said once, whichever of the reads side by side sees it first
            said, self.batched = not self.batched, False
        if not said and self._note is not None:
            self._note(
                f"Note: W&B refused to read several views in one request ({exc}); "
                "reading one view per request from now on"
            )


def _parts(views: list[LiveObject], batched: bool) -> list[list[LiveObject]]:
    """The requests a read of `views` takes: up to `BATCH` views and `BATCH_BYTES` of specs
    each, or one view each once batches are refused."""
    parts: list[list[LiveObject]] = []
    size = 0
    for view in views:
        full = not parts or len(parts[-1]) == BATCH or size + len(view.text) > BATCH_BYTES
        if full or not batched:
            parts.append([])
            size = 0
        parts[-1].append(view)
        size += len(view.text)
    return parts


def refuses_batches(exc: WbmigrateError) -> bool:
    """Whether an error answers the batched query itself (a server may cap aliases or query
    size), not the moment: a GraphQL error, or a 4xx other than a refused key (401, 403), a
    timeout (408) or a rate limit (429), which a view read alone would meet as well."""
    if isinstance(exc, GraphQLError):
        return True
    status = exc.status if isinstance(exc, ApiError) else 0
    return 400 <= status < 500 and status not in (401, 403, 408, 429)


def _trigger_objects(found: dict[str, dict[str, Any] | None], entity: str, project: str) -> Fresh:
    of = LiveObject.of_trigger
    return Fresh({i: of(t, entity, project) if t else None for i, t in found.items()})


def _failed(objs: list[LiveObject], exc: WbmigrateError) -> Fresh:
    return Fresh(failed=dict.fromkeys((o.id for o in objs), one_line(exc)))
