"""W&B's GraphQL API over `requests`: typed errors, bounded waits, and the few operations
wbmigrate needs (list and read views and triggers, save them). No rename logic here; where to
connect and with which key is `credentials`, the query texts are `queries`, the HTTP under it
(each try's deadline, retries, `Retry-After`, the run's deadline) is `transport`.

Every answer is checked for the shape the operations rely on: a null, a missing field or a
listing that would page for ever is a one-line `ApiError`, never a traceback or a hang. The API
key only ever travels in the Authorization header of requests to the configured W&B host.
Over 300 lines because each operation's call sits beside the checks of its answer's shape.
"""

from __future__ import annotations

import functools
import json
import math
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import requests

from wbmigrate import __version__
from wbmigrate.kinds import VIEW_TYPES
from wbmigrate.live import queries, shapes, transport
from wbmigrate.live.shapes import ShapeError, a_dict, a_list, text
from wbmigrate.live.support import Support
from wbmigrate.live.transport import NOT_WANTED, ApiError, Bounds, Deadline, Stopped, seconds
from wbmigrate.live.watchdog import Watch, WatchedAdapter

T = TypeVar("T")
PAGE_SIZE = 100
RETRY_STATUSES = (429, 500, 502, 503, 504)
CONNECT_TIMEOUT = 10.0
BACKOFF_MAX = 30.0  # the longest wait between tries when W&B asks for none
# An answer is read in pieces of up to this many bytes. Each read of the socket lets go of the
# interpreter's lock and must win it back; a thread that plans meanwhile holds it up to 5 ms
# each time. requests reads 10 KiB at a time: a page of views (3 MB) waited 0.3 s so, 0.1 s now
# (at 100 ms a request that no longer shows: the 500-view plan took 7.27 s read 10 KiB at a
# time against 7.49 s, on a busy machine).
READ_AT_ONCE = 16 << 20
# The largest answer read, decompressed (`--max-answer`): a page of 100 views of 500 KB, large
# ones, is 50 MB; a spec over 32 MB is not read at all. A larger answer is an error. Four
# listings read at once, each answer held as bytes and as text while it is parsed: at 128 MB a
# server answering every request at the cap keeps a run near 1 GB (at 256 MB, 2 GB).
MAX_ANSWER = 128 << 20
# a view's fields after its id, in the order `View.node` spells them
NODE_FIELDS = ("name", "type", "display_name", "description", "parent_id", "updated_at", "spec")
NO_PAGE = {"edges": [], "pageInfo": {"hasNextPage": False, "endCursor": None}}


@dataclass(frozen=True)
class View:
    """A report, report draft or saved workspace, with its spec string exactly as received."""

    id: str
    name: str
    type: str
    display_name: str
    description: str
    spec: str
    updated_at: str | None
    parent_id: str | None
    entity: str
    project: str

    def node(self) -> dict[str, Any]:
        """The view as the API spells it (the inverse of `from_node`)."""
        return {_camel(name): getattr(self, name) for name in ("id", *NODE_FIELDS)}

    @classmethod
    def from_node(cls, node: Any, entity: str, project: str) -> View:
        """A view from the API's node; a node that is not one is a `ShapeError`."""
        node = a_dict(node, "a view")
        view_id = text(node, "id", "a view")
        if not view_id:
            raise ShapeError("unexpected answer from W&B: a view has no id")
        where = f"view {view_id[:40]}"
        found: dict[str, Any] = {name: text(node, _camel(name), where) for name in NODE_FIELDS}
        for name in set(NODE_FIELDS) - {"parent_id", "updated_at"}:  # the others read null as ""
            found[name] = found[name] or ""
        if found["type"] not in VIEW_TYPES:  # the listing asked for one of these
            raise ShapeError(f"unexpected answer from W&B: {where} is of no type it lists")
        return cls(id=view_id, **found, entity=entity, project=project)


def _camel(name: str) -> str:
    """A field's name as the API spells it: `display_name` → `displayName`."""
    first, *rest = name.split("_")
    return first + "".join(word.title() for word in rest)


class Client:
    """One W&B host. Thread-safe: each thread gets its own session (connection pool).

    `timeout` bounds each try of a request whole (connecting to the answer's last byte);
    `max_wait` the longest `Retry-After` obeyed; `deadline` (seconds) the whole run;
    `on_retry` hears one line per retry, and per request asked again without a part the server
    refused (`support`: the server's features and refusals)."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 60.0,
        retries: int = 8,
        backoff: float = 0.5,
        max_wait: float = 60.0,
        deadline: float | None = None,
        on_retry: Callable[[str], None] | None = None,
        key_source: str = "",
        max_answer: int = MAX_ANSWER,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        login = f"`wandb login --relogin --host {self.base_url}`"  # said when W&B refuses the key
        self._relogin = key_source and f"; the key came from {key_source}: check it, or run {login}"
        self._auth = ("api", api_key)
        self.max_answer = max_answer  # bytes
        clock = transport.CLOCK
        run_end = Deadline(math.inf if deadline is None else deadline, clock)
        self.bounds = Bounds(timeout, max_wait, run_end, on_retry, clock=clock)
        self._retry = transport.BoundedRetry(
            total=retries,  # connecting, reading and statuses alike
            status_forcelist=RETRY_STATUSES,
            allowed_methods=None,
            backoff_factor=backoff,
            backoff_max=BACKOFF_MAX,
            respect_retry_after_header=True,
            raise_on_status=False,
            bounds=self.bounds,
        )
        self._local = threading.local()
        self.support = Support(self.execute, on_retry)

    def __repr__(self) -> str:  # never the key
        return f"Client({self.base_url!r})"

    def warn(self, line: str) -> None:
        """`Warning: line`, where retries are reported."""
        if self.bounds.on_retry is not None:
            self.bounds.on_retry(f"Warning: {line}")

    def close(self) -> None:
        """Call off what its threads still do once the command has ended (an error cut it
        short, or Ctrl-C): no request or retry starts after this, and none is reported."""
        self.bounds.closed.set()

    def _session(self) -> requests.Session:
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = _Session()
            for scheme in ("http://", "https://"):
                session.mount(scheme, WatchedAdapter(max_retries=self._retry))
            session.headers["User-Agent"] = f"wbmigrate/{__version__}"
            self._local.session = session
        return session

    def execute(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        """POST one GraphQL operation; its `data`, or a typed error."""
        if self.bounds.closed.is_set():
            raise Stopped(NOT_WANTED)
        self.bounds.deadline.check()
        url = f"{self.base_url}/graphql"
        budget = self.bounds.budget()
        with Watch(self.bounds.budget, self.bounds.clock.timer) as watch:
            try:
                response = self._session().post(
                    url,
                    json={"query": query, "variables": variables},
                    auth=self._auth,
                    timeout=(min(budget, CONNECT_TIMEOUT), budget),
                    stream=True,
                )
                self.bounds.outage.end()
                body = self._read(response, url)
            except requests.exceptions.RequestException as exc:
                raise self._failure(exc, watch.expired, url) from None
            if watch.expired:  # the answer was cut short: whatever arrived is not all of it
                raise self._timed_out(url)
        if response.status_code in RETRY_STATUSES:
            raise ApiError(
                f"{url}: HTTP {response.status_code} {response.reason}, still failing "
                f"after retries",
                response.status_code,
            )
        return shapes.data_of(response, body, url, self._relogin)

    def _read(self, response: requests.Response, url: str) -> bytearray:
        """The whole answer, a piece at a time, up to `max_answer` bytes: one larger is an
        error as soon as it passes the cap, so memory holds the cap and a piece at most.
        Compressed answers are counted decompressed (urllib3 decompresses a piece at a time:
        a gzip bomb is stopped as it expands)."""
        body = bytearray()  # read as it is: a copy would double the memory
        if 300 <= response.status_code < 400:  # a redirect, refused unread (`data_of`)
            response.close()
            return body
        for piece in response.iter_content(min(READ_AT_ONCE, self.max_answer)):
            body += piece
            if len(body) > self.max_answer:
                response.close()
                cap = f"{self.max_answer / (1 << 20):g} MB"
                raise ApiError(
                    f"{url}: an answer over {cap} (--max-answer); stopped reading it",
                    response.status_code,
                )
        return body

    def _failure(self, exc: Exception, expired: bool, url: str) -> ApiError:
        """One line for a request that got no usable answer."""
        if expired or self.bounds.deadline.remaining() <= 0:
            return self._timed_out(url)
        why = transport.unreachable(_inner(exc))
        if why is not None:
            return ApiError(f"cannot reach {self.base_url} ({why}); is WANDB_BASE_URL right?")
        if isinstance(exc, requests.exceptions.Timeout):
            return self._timed_out(url)
        if isinstance(exc, requests.exceptions.RetryError):
            return ApiError(f"{url}: still failing after retries ({_reason(exc)})")
        return ApiError(f"cannot reach {url}: {_reason(exc)}")

    def _timed_out(self, url: str) -> ApiError:
        if self.bounds.deadline.remaining() <= 0:
            return self.bounds.deadline.error()
        return ApiError(f"{url}: timed out: no whole answer within {seconds(self.bounds.timeout)}")

    # --- operations -------------------------------------------------------------------------

    def view_pages(self, entity: str, project: str, view_type: str) -> Iterator[list[View]]:
        """Every view of one type in a project, a page at a time; a listing that would never
        end (a repeated or missing cursor, endless pages) stops with an error. A page with an
        edge that is no view gives the views before it, then the error, as a listing read a
        view at a time would."""

        variables = {"entity": entity, "project": project, "viewType": view_type}
        parts = ("parentId", view_type) if view_type == "runs/draft" else ("parentId",)

        def ask(after: str | None) -> dict[str, Any]:
            if view_type in self.support.refused:  # drafts a server does not list: none
                return NO_PAGE
            query = queries.list_views(self.support.asks("parentId"))
            data = self.execute(query, {**variables, "first": PAGE_SIZE, "after": after})
            found = shapes.project_of(data, entity, project)
            return a_dict(found.get("allViews"), "project.allViews")

        what = f"{_LISTINGS.get(view_type, view_type)} of {entity}/{project}"
        pages = shapes.listing_pages(lambda after: self._refusing(lambda: ask(after), parts), what)
        for edges in pages:
            views: list[View] = []
            try:
                for edge in edges:
                    node = a_dict(edge, "an edge of project.allViews").get("node")
                    views.append(View.from_node(node, entity, project))
            except ShapeError:
                yield views
                raise
            yield views

    def _refusing(self, ask: Callable[[], T], parts: Sequence[str]) -> T:
        """`ask()`, asked again without each of `parts` the server refuses (`Support`), once
        per part at most."""
        for _ in parts:
            try:
                return ask()
            except ApiError as exc:
                if not self.support.refuse(exc, parts):
                    raise
        return ask()

    def _view_query(self, query: Callable[[bool], str], variables: dict[str, Any]) -> Any:
        """A query of views, with `parentId` unless the server refused it (then asked again)."""
        return self._refusing(
            lambda: self.execute(query(self.support.asks("parentId")), variables), ("parentId",)
        )

    def view(self, view_id: str, entity: str, project: str) -> View | None:
        node = self._view_query(queries.get_view, {"id": view_id}).get("view")
        return View.from_node(node, entity, project) if node is not None else None

    def views_by_id(self, wanted: Sequence[tuple[str, str, str]]) -> list[View | None]:
        """Several views in one request (GraphQL aliases), each `(id, entity, project)`; a
        view that no longer exists is None. An answer that leaves one out, or answers with
        another view, is a `ShapeError`: a view not answered for is not a view gone."""
        variables = {f"id{i}": view_id for i, (view_id, _, _) in enumerate(wanted)}
        data = self._view_query(functools.partial(queries.get_views, len(wanted)), variables)
        views: list[View | None] = []
        for i, (view_id, entity, project) in enumerate(wanted):
            node = data.get(f"v{i}")
            view = View.from_node(node, entity, project) if node is not None else None
            if f"v{i}" not in data or (view is not None and view.id != view_id):
                raise ShapeError(f"unexpected answer from W&B: no answer for view {view_id[:40]}")
            views.append(view)
        return views

    def triggers(self, entity: str, project: str) -> list[dict[str, Any]]:
        """The project's automations (null entries, which name nothing, are left out)."""
        variables = {"entity": entity, "project": project}
        data = self._refusing(
            lambda: self.execute(queries.list_triggers(self._omitted()), variables),
            queries.OPTIONAL_FRAGMENTS,
        )
        found = a_list(shapes.project_of(data, entity, project).get("triggers"), "project.triggers")
        return [_trigger(t) for t in found if t is not None]

    def triggers_named(self, entity: str, names: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The entity's automations of each name, in one request, by id (an entity's listing
        filtered by name: W&B answers it without reading every automation)."""
        filters = {f"name{i}": json.dumps({"name": name}) for i, name in enumerate(names)}

        def ask() -> dict[str, Any]:
            if not self.support.asks("Entity.triggers"):  # refused: read per project
                raise ShapeError("W&B does not read automations by entity")
            query = queries.get_triggers(len(names), self._omitted())
            return self.execute(query, {"entity": entity, **filters})

        data = self._refusing(ask, ("Entity.triggers", *queries.OPTIONAL_FRAGMENTS))
        scope = a_dict(data.get("entity"), "entity")
        found: dict[str, dict[str, Any]] = {}
        for i in range(len(names)):
            connection = a_dict(scope.get(f"t{i}"), "entity.triggers")
            for edge in a_list(connection.get("edges"), "entity.triggers.edges"):
                node = a_dict(edge, "an edge of entity.triggers").get("node")
                if node is not None:
                    trigger = _trigger(node)
                    found[trigger["id"]] = trigger
        return found

    def _omitted(self) -> frozenset[str]:
        """The trigger fragments not asked for: the server lacks their type."""
        return frozenset(p for p in queries.OPTIONAL_FRAGMENTS if not self.support.asks(p))

    def upsert_view(self, view: View, spec: str) -> str | None:
        """Save `spec` into an existing view, every other field copied from it; the time W&B
        gives the save (`updatedAt`)."""
        fields = {"entityName": view.entity, "projectName": view.project, **view.node()}
        del fields["updatedAt"]  # W&B sets it
        if not view.parent_id:
            del fields["parentId"]
        data = self.execute(queries.UPSERT_VIEW, {"input": {**fields, "spec": spec}})
        answer = a_dict(data.get("upsertView"), "upsertView")
        return _saved_at(answer.get("view"), "upsertView.view")

    def update_trigger(self, fields: dict[str, Any]) -> str | None:
        """Replace a trigger's fields; the time W&B gives the save (`updatedAt`)."""
        data = self.execute(queries.UPDATE_TRIGGER, {"input": fields})
        answer = a_dict(data.get("updateFilterTrigger"), "updateFilterTrigger")
        return _saved_at(answer.get("trigger"), "updateFilterTrigger.trigger")


class _Session(requests.Session):
    """A session that follows no redirect: the API's URL never redirects, and requests reads a
    redirect's whole answer, past any cap, to follow it (and even when told not to)."""

    def get_redirect_target(self, resp: requests.Response) -> None:
        return None


def _trigger(node: Any) -> dict[str, Any]:
    """An automation of an answer: an object with an id, or a `ShapeError`."""
    trigger = a_dict(node, "an automation")
    if not text(trigger, "id", "an automation"):
        raise ShapeError("unexpected answer from W&B: an automation has no id")
    return trigger


def _saved_at(node: Any, where: str) -> str | None:
    """`updatedAt` of a mutation's answer: one that is not an object is a `ShapeError`."""
    return text(a_dict(node, where), "updatedAt", where)


_LISTINGS = {"runs": "reports", "runs/draft": "report drafts", "project-view": "workspaces"}


def _inner(exc: Exception) -> BaseException | None:
    """urllib3's reason under a requests exception (`MaxRetryError.reason`, or the error)."""
    inner = exc.args[0] if exc.args else None
    reason = getattr(inner, "reason", inner)
    return reason if isinstance(reason, BaseException) else None


def _reason(exc: Exception) -> str:
    """Why a request failed, from urllib3's reason (its text holds no header, so no key)."""
    return str(_inner(exc) or (exc.args[0] if exc.args else None) or exc)[:200]
