"""A live W&B project as objects wbmigrate can plan and write: views and automations.

Each object keeps what it was fetched as (the spec string exactly as received, the trigger as
returned) and a fingerprint, so a write can refuse an object that changed in the meantime.
`Reader` reads many objects again at once, for the writes that follow it at once.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from functools import partial
from queue import Full, Queue
from typing import TYPE_CHECKING, Any, TypeVar

from wbmigrate.errors import WbmigrateError
from wbmigrate.live.client import Client, GraphQLError, ShapeError, View
from wbmigrate.live.transport import ApiError, stop_with

if TYPE_CHECKING:
    from wbmigrate.plan import Source

T = TypeVar("T")

REPORT, DRAFT, WORKSPACE = "runs", "runs/draft", "project-view"
# The kind of each view type (`kinds.VIEW_TYPES`, which loads the engine: a listing's reader
# would load it before asking for its second page).
VIEW_KINDS = {REPORT: "report", DRAFT: "report", WORKSPACE: "workspace"}
BATCH = 50  # views read in one request at most (the aliases of one query)
# The specs one batched answer may hold, as last read: an answer, whole in memory and within
# one try's timeout, is never many large specs at once (a larger spec is read alone).
BATCH_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class Fingerprint:
    updated_at: str | None
    sha256: str


@dataclass(frozen=True)
class ObjectRef:
    """Which object a result is about: enough to name it, whether or not it was read."""

    kind: str  # report | workspace | automation
    id: str
    title: str
    is_draft: bool = False

    def __str__(self) -> str:
        return f'{self.kind} "{self.title}"' + (" (draft)" if self.is_draft else "")


@dataclass(frozen=True)
class LiveObject:
    """A view (report, draft, workspace) or a project automation, as fetched."""

    kind: str  # report | workspace | automation
    id: str
    title: str  # the display name (views) or trigger name
    text: str  # the view's spec string as received, or the trigger as JSON
    updated_at: str | None
    entity: str
    project: str
    view: View | None = None
    trigger: dict[str, Any] | None = None

    @property
    def is_draft(self) -> bool:
        return self.view is not None and self.view.type == DRAFT

    @property
    def ref(self) -> ObjectRef:
        return ObjectRef(self.kind, self.id, self.title, self.is_draft)

    @property
    def fingerprint(self) -> Fingerprint:
        return Fingerprint(self.updated_at, hashlib.sha256(self.text.encode()).hexdigest())

    @property
    def problem(self) -> str | None:
        """Why the object cannot be planned as W&B gave it: an automation without its
        condition or action (whose metric could not be seen, or written back)."""
        if self.trigger is None:
            return None
        missing = [k for k in ("event", "action") if not isinstance(self.trigger.get(k), dict)]
        return f"W&B gave no {' or '.join(missing)} for this automation" if missing else None

    def source(self) -> Source:
        from wbmigrate.plan import Source  # loaded by then: a plan's first request is out

        name = f"{self.title} (draft)" if self.is_draft else self.title
        return Source(name=name, origin=self.id, text=self.text, kind=self.kind, error=self.problem)

    @classmethod
    def of_view(cls, view: View) -> LiveObject:
        return cls(
            VIEW_KINDS[view.type],
            view.id,
            view.display_name or view.name,
            view.spec,
            view.updated_at,
            view.entity,
            view.project,
            view=view,
        )

    @classmethod
    def of_trigger(cls, trigger: dict[str, Any], entity: str, project: str) -> LiveObject:
        return cls(
            "automation",
            trigger["id"],
            trigger.get("name") or "",
            canonical(trigger),
            trigger.get("updatedAt"),
            entity,
            project,
            trigger=trigger,
        )


def canonical(trigger: dict[str, Any]) -> str:
    """A trigger as stable JSON text (the API gives objects, not one spec string)."""
    return json.dumps(trigger, ensure_ascii=False, sort_keys=True)


def fetch_project(
    client: Client,
    entity: str,
    project: str,
    *,
    drafts: bool = True,
    ahead: int = 2,
) -> Iterator[LiveObject]:
    """Published reports, their drafts, saved workspaces, then the project's automations.

    Each listing is read by a thread of its own, at most `ahead` pages ahead of the consumer:
    the listings' requests overlap one another and the planning, and memory stays bounded.
    The views' threads start at once: their first requests are on their way when this
    returns. The automations' starts once a view listing has answered (or when it is reached):
    with the key census alongside, that keeps the requests out at first to four, and a project
    that cannot be read costs no more requests than before the census ran alongside."""
    types = [REPORT, DRAFT, WORKSPACE] if drafts else [REPORT, WORKSPACE]
    stop = threading.Event()
    automations = _Later(lambda: _read_ahead(_triggers(client, entity, project), ahead, stop))
    views = [
        _read_ahead(_views(client, entity, project, t), ahead, stop, automations.start)
        for t in types
    ]
    return _Listings(itertools.chain.from_iterable(itertools.chain(*views, automations)), stop)


class _Later(Iterator[T]):
    """A listing whose reader starts on `start()`, or when it is first asked for an item."""

    def __init__(self, begin: Callable[[], Iterator[T]]) -> None:
        self._begin = begin
        self._items: Iterator[T] | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._items is None:
                self._items = self._begin()

    def __next__(self) -> T:
        self.start()
        assert self._items is not None
        return next(self._items)


class _Listings(Iterator[T]):
    """The objects of the listings, in turn; the readers end once the last is taken, on an
    error, or when the consumer lets go of it early."""

    def __init__(self, items: Iterator[T], stop: threading.Event) -> None:
        self._items = items
        self._stop = stop

    def __next__(self) -> T:
        try:
            return next(self._items)
        except BaseException:
            self._stop.set()
            raise

    def __del__(self) -> None:
        self._stop.set()


def _views(client: Client, entity: str, project: str, view_type: str) -> Iterator[list[LiveObject]]:
    """A page at a time, so its reader asks for the next page as soon as one has arrived (an
    object at a time, each woke the planning thread, which held the interpreter's lock while
    the reader waited to ask)."""
    for views in client.view_pages(entity, project, view_type):
        yield [LiveObject.of_view(view) for view in views]


def _triggers(client: Client, entity: str, project: str) -> Iterator[list[LiveObject]]:
    """The automations scoped to the project (one without a scope is not, as far as can be
    told, and is left alone), in one page."""
    triggers = client.triggers(entity, project)
    yield [
        LiveObject.of_trigger(trigger, entity, project)
        for trigger in triggers
        if isinstance(scope := trigger.get("scope"), dict) and scope.get("__typename") == "Project"
    ]


_END = object()


def _read_ahead(
    items: Iterator[T],
    size: int,
    stop: threading.Event,
    answered: Callable[[], None] | None = None,
) -> Iterator[T]:
    """`items`, produced from now on by a thread of its own, at most `size` ahead of the
    consumer, until `stop` is set. An error in the thread is raised to the consumer;
    `answered()` is called before the first item is handed over (or the end, if none)."""
    queue: Queue[tuple[Any, BaseException | None]] = Queue(maxsize=size)

    def put(entry: tuple[Any, BaseException | None]) -> bool:
        while not stop.is_set():  # the consumer may have gone: never block for ever
            try:
                queue.put(entry, timeout=0.1)
                return True
            except Full:
                continue
        return False

    def produce() -> None:
        stop_with(stop)  # once the consumer has gone, no retry is started
        tell = answered  # once, at the first item or the end
        try:
            for item in items:
                if tell is not None:
                    tell()
                    tell = None
                if not put((item, None)):
                    return
            if tell is not None:
                tell()
            put((_END, None))
        except BaseException as exc:  # handed to the consumer, which raises it
            put((_END, exc))

    threading.Thread(target=produce, daemon=True).start()

    def consume() -> Iterator[T]:
        while True:
            item, error = queue.get()
            if error is not None:
                raise error
            if item is _END:
                return
            yield item

    return consume()


def reread(client: Client, obj: LiveObject) -> LiveObject | None:
    """The object as it is now, or None when it no longer exists."""
    if obj.view is not None:
        view = client.view(obj.id, obj.entity, obj.project)
        return LiveObject.of_view(view) if view else None
    for trigger in client.triggers(obj.entity, obj.project):
        if trigger.get("id") == obj.id:
            return LiveObject.of_trigger(trigger, obj.entity, obj.project)
    return None


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
    request, and the requests of a read sent side by side on `pool`. Once the server refuses a
    batched read, views are read one per request for the rest of the run; `note` hears it once.

    Automations are read by name (the entity's, filtered: a listing of the project's would
    read them all for each batch, quadratic in their number), and matched by id. One not found
    so (renamed, gone, among more of its name) is looked for in its project's listing, which
    tells changed from gone; a server that refuses the read by name, or whose answer missed an
    automation of the name asked for, is read by listing for the rest of the run."""

    def __init__(
        self, client: Client, pool: Executor, note: Callable[[str], None] | None = None
    ) -> None:
        self.client, self._pool, self._note = client, pool, note
        self.batched = True
        self.by_name = True
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
        tasks = [partial(self._views, part) for part in parts[0] + parts[1]]
        projects: dict[tuple[str, str], list[LiveObject]] = {}
        for obj in [*objs, *apart]:
            if obj.view is None:
                projects.setdefault((obj.entity, obj.project), []).append(obj)
        tasks += [partial(self._triggers, wanted) for wanted in projects.values()]
        if len(tasks) == 1:
            return tasks[0]()
        return _sum(self._pool.map(lambda task: task(), tasks))

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
        named = [o for o in wanted if o.title] if self.by_name else []
        found: dict[str, dict[str, Any]] = {}
        if named:
            try:
                found = self.client.triggers_named(entity, sorted({o.title for o in named}))
            except WbmigrateError as exc:
                if not (refuses_batches(exc) or isinstance(exc, ShapeError)):
                    return _failed(wanted, exc)
                self.by_name = False
        fresh: dict[str, dict[str, Any] | None] = {
            o.id: found[o.id] for o in wanted if o.id in found
        }
        rest = [o for o in wanted if o.id not in fresh]
        if rest:
            try:
                listed = {t["id"]: t for t in self.client.triggers(entity, project)}
            except WbmigrateError as exc:
                return _failed(rest, exc).add(_trigger_objects(fresh, entity, project))
            asked = {o.id for o in named}
            if any(o.id in asked and listed.get(o.id, {}).get("name") == o.title for o in rest):
                self.by_name = False  # the name asked for was there; the answer left it out
            fresh.update({o.id: listed.get(o.id) for o in rest})
        return _trigger_objects(fresh, entity, project)

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


def _sum(parts: Iterator[Fresh]) -> Fresh:
    total = Fresh()
    for part in parts:
        total.add(part)
    return total


def _trigger_objects(
    triggers: dict[str, dict[str, Any] | None], entity: str, project: str
) -> Fresh:
    of = LiveObject.of_trigger
    return Fresh({i: of(t, entity, project) if t else None for i, t in triggers.items()})


def _failed(objs: list[LiveObject], exc: WbmigrateError) -> Fresh:
    line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return Fresh(failed=dict.fromkeys((o.id for o in objs), line))


def write(client: Client, obj: LiveObject, new_text: str) -> str | None:
    """Save a view's new spec, or a trigger's new fields, everything else as fetched; the
    time W&B gives the save (`updatedAt`), as the mutation's answer shows it."""
    if obj.view is not None:
        return client.upsert_view(obj.view, new_text)
    return client.update_trigger(trigger_input(json.loads(new_text)))


def stored_as_sent(obj: LiveObject, now: LiveObject | None, sent: str) -> bool:
    """Whether what W&B stores now is what was sent (a trigger: the fields wbmigrate writes)."""
    if now is None:
        return False
    if obj.view is not None:
        return now.text == sent
    assert now.trigger is not None
    return trigger_input(now.trigger) == trigger_input(json.loads(sent))


SCOPE_TYPES = {
    "Project": "PROJECT",
    "ArtifactPortfolio": "ARTIFACT_COLLECTION",
    "ArtifactSequence": "ARTIFACT_COLLECTION",
}


class UnsupportedTrigger(WbmigrateError):
    """A trigger wbmigrate cannot write back whole (an action type it does not know)."""


def trigger_input(trigger: dict[str, Any]) -> dict[str, Any]:
    """`UpdateFilterTriggerInput` for a trigger: a full replacement, every field copied. A
    trigger W&B answered without a part that must be copied is refused in one line."""
    scope, event, action = (_part(trigger, key) for key in ("scope", "event", "action"))
    whole = (
        scope.get("__typename") in SCOPE_TYPES
        and all(isinstance(v, str) for v in (trigger.get("name"), scope.get("id")))
        and all(isinstance(event.get(k), str) for k in ("eventType", "filter"))
        and isinstance(trigger.get("enabled"), bool)
    )
    if not whole:
        raise UnsupportedTrigger(f"{_named(trigger)}: W&B's answer lacks fields to copy back")
    fields: dict[str, Any] = {
        "id": trigger["id"],
        "name": trigger["name"],
        "description": trigger.get("description"),
        "enabled": trigger["enabled"],
        "scopeType": SCOPE_TYPES[scope["__typename"]],
        "scopeID": scope["id"],
        "triggeringEventType": event["eventType"],
        "eventFilter": event["filter"],
    }
    kind = action.get("__typename")
    if kind == "NotificationTriggeredAction":
        fields["triggeredActionType"] = "NOTIFICATION"
        fields["triggeredActionConfig"] = {
            "notificationActionInput": {
                "integrationID": _part(trigger, "action", "integration").get("id"),
                "title": action.get("title"),
                "message": action.get("message"),
                "severity": action.get("severity"),
            }
        }
    elif kind == "GenericWebhookTriggeredAction":
        fields["triggeredActionType"] = "GENERIC_WEBHOOK"
        fields["triggeredActionConfig"] = {
            "genericWebhookActionInput": {
                "integrationID": _part(trigger, "action", "integration").get("id"),
                "requestPayload": action.get("requestPayload"),
            }
        }
    else:
        raise UnsupportedTrigger(
            f"{_named(trigger)}: its action ({kind}) cannot be "
            "written back safely; change it in the W&B UI"
        )
    return fields


def _part(trigger: dict[str, Any], *keys: str) -> dict[str, Any]:
    """`trigger[keys[0]][keys[1]]...`, each an object, or a one-line refusal."""
    part: Any = trigger
    for key in keys:
        part = part.get(key)
        if not isinstance(part, dict):
            raise UnsupportedTrigger(f"{_named(trigger)}: W&B gave no {key} to copy back")
    return dict(part)


def _named(trigger: dict[str, Any]) -> str:
    name = trigger.get("name")
    return f"automation {name!r}" if isinstance(name, str) else f"automation {trigger.get('id')}"
