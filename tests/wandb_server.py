"""A local W&B-compatible GraphQL server for end-to-end tests, on 127.0.0.1.

It executes real GraphQL (graphql-core) against a schema written for the part of W&B's API that
wbmigrate and the wandb SDK use: views (reports, drafts, saved workspaces), automations, and
runs with the keys they logged (`WandbState.add_run`: `runs`, `run`, `runCount`; `summaryMetrics`
a JSON string, `historyKeys` a JSON object; run filters on name, display name, state and times
with `$eq $ne $in $nin $gt $gte $lt $lte $and $or`, order `[+-]created_at|heartbeat_at`, any
other is an error). It checks HTTP Basic auth and records every request.

An organisation: `WandbServer(state, more=[...])` or `server.add_project(state)` serves further
projects, of any entity, each numbering its objects from its own `first_id`; `project`,
`models` and `entity { projects }` (the entity's projects, as `api.projects` lists them), `view`,
`upsertView`, `updateFilterTrigger` and `entity { triggers }` each act on the right project. A
`WandbState(..., forbidden=True)` answers every request about it with HTTP 403 and W&B's
"permission denied" (code PERMISSION_ERROR); listings still name it, but leave its alerts out
of `entity { triggers }`.

Faults: `server.faults` is a list of `Fault`s, each used by the next request of its
`operation` (any, when None) and then removed, unless `sticky`; `server.chaos(operation)` may
return one per request; `server.latency` delays every answer. What a `Fault` does:

- `status=429, headers={"Retry-After": "1"}`: an error status instead of the answer, with any
  headers (`retry_after(value)` builds one; the value may be seconds or an HTTP date).
- `delay=2.5`: answer that much later. `drop=True`: close the connection without an answer.
  `die=True`: stop the whole server.
- `drip=2.0`: the normal answer, its body sent one byte every 2 s (`drip_headers=True`: the
  status line and headers too), for deadlines that must be total, not per read.
- `body=b"<html>"`: these raw bytes instead of the JSON answer (a body that is not JSON).
- `answer=fn`: the JSON answer passed through `fn(payload, variables)`, which returns what to
  send instead: any JSON value (a list, a string: the wrong type), or the payload edited.
  `replace_at(path, value)` and `remove_at(path)` build such faults for odd shapes
  (`allViews: null`, a null edge node, a node without `id`, `triggers: null` or `[null]`, a
  trigger without `scope`, `event` or `action`); `repeated_cursor()`, `missing_cursor()` and
  `endless_pages()` make listings that would page for ever.
- `echo_key=True`: an error that repeats the request's secrets, as a careless server might:
  the request's Authorization header and API key in the GraphQL error message, in the body
  and in the HTTP reason phrase (with `status`: that status; without: a 200 with `errors`),
  for tests that the key never reaches output.

Hooks: `server.hooks[operation](variables)` runs before that operation is answered, to edit an
object between a read and a write the way a colleague in the UI would; `edit_on(operation,
object_id, change)` installs one that edits a view's spec (or a trigger) once. A read of several
views at once (variables `id0`, `id1`, ...) runs the hook once per view, with `{"id": ...}`, as
a read of that view alone would.
"""

from __future__ import annotations

import base64
import copy
import itertools
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from graphql import (
    DocumentNode,
    ExecutionResult,
    GraphQLError,
    GraphQLScalarType,
    build_schema,
    execute_sync,
    parse,
    validate,
)

SDL = """
scalar JSONString
scalar JSON
scalar DateTime
enum ViewSource { WANDB_SDK WANDB_UI WANDB_UI_SHARE_PANEL WEAVE_UI }
enum AlertSeverity { INFO WARN ERROR }
enum TriggerScopeType { PROJECT ARTIFACT_COLLECTION ENTITY }
enum TriggeredActionType { NOTIFICATION GENERIC_WEBHOOK NO_OP QUEUE_JOB ARIA PUSH_NOTIFICATION }
enum EventTriggeringConditionType {
  RUN_METRIC RUN_METRIC_CHANGE RUN_METRIC_ZSCORE RUN_STATE CREATE_ARTIFACT ADD_ARTIFACT_ALIAS
  LINK_MODEL UNLINK_ARTIFACT ADD_ARTIFACT_TAG REMOVE_ARTIFACT_TAG ADD_COLLECTION_TAG
  REMOVE_COLLECTION_TAG UPDATE_ARTIFACT_ALIAS WEAVE_METRIC_THRESHOLD
}

type Query {
  viewer: User
  serverInfo: ServerInfo
  project(name: String, entityName: String): Project
  view(id: ID!): View
  entity(name: String!): Entity
  models(entityName: String, after: String, first: Int, order: String, anonymous: Boolean):
    ProjectConnection
}
type Mutation {
  upsertView(input: UpsertViewInput!): UpsertViewPayload
  updateFilterTrigger(input: UpdateFilterTriggerInput!): UpdateFilterTriggerPayload
}

type User { id: ID! name: String entity: String username: String email: String
            photoUrl: String flags: JSONString teams: EntityConnection admin: Boolean
            deletedAt: DateTime apiKeys: ApiKeyConnection }
type ApiKeyConnection { edges: [ApiKeyEdge!]! }
type ApiKeyEdge { node: ApiKey }
type ApiKey { id: ID! name: String! description: String }
type EntityConnection { edges: [EntityEdge!]! }
type EntityEdge { node: Entity }
type ServerInfo { features: [ServerFeature!]! }
type ServerFeature { name: String! isEnabled: Boolean! }
type PageInfo { endCursor: String hasNextPage: Boolean! startCursor: String
                hasPreviousPage: Boolean }

type Project {
  id: ID! internalId: ID name: String! entityName: String! createdAt: DateTime
  isBenchmark: Boolean readOnly: Boolean user: User
  allViews(viewType: String, viewName: String, userName: String, first: Int, after: String):
    ViewConnection
  triggers: [Trigger!]!
  runCount(filters: JSONString): Int
  runs(filters: JSONString, after: String, first: Int, order: String): RunConnection
  run(name: String!): Run
}
type ProjectConnection { edges: [ProjectEdge!]! pageInfo: PageInfo! }
type ProjectEdge { node: Project cursor: String! }
type RunConnection { edges: [RunEdge!]! pageInfo: PageInfo! }
type RunEdge { node: Run cursor: String! }
type Run {
  id: ID! projectId: Int name: String! displayName: String state: String createdAt: DateTime
  heartbeatAt: DateTime historyLineCount: Int summaryMetrics: JSONString config: JSONString
  systemMetrics: JSONString historyKeys(format: String): JSON tags: [String!] group: String
  jobType: String sweepName: String commit: String readOnly: Boolean description: String
  notes: String user: User
}
type ViewConnection { edges: [ViewEdge!]! pageInfo: PageInfo! }
type ViewEdge { node: View cursor: String! }
type View {
  id: ID! name: String type: String displayName: String description: String spec: JSONString
  updatedAt: DateTime createdAt: DateTime parentId: ID user: User project: Project
  entityName: String projectName: String
}
input UpsertViewInput {
  id: ID entityName: String projectName: String name: String displayName: String
  description: String type: String spec: String parentId: ID locked: Boolean
  coverUrl: String previewUrl: String createdUsing: ViewSource clientMutationId: String
}
type UpsertViewPayload { view: View inserted: Boolean }

type Entity {
  id: ID! name: String! entityType: String
  projects(first: Int, after: String, order: String): ProjectConnection
  triggers(after: String, first: Int, order: String, filters: JSONString): TriggerConnection
}
type TriggerConnection { edges: [TriggerEdge!]! pageInfo: PageInfo! }
type TriggerEdge { node: Trigger cursor: String! }
type Trigger {
  id: ID! createdAt: DateTime! updatedAt: DateTime name: String! description: String
  enabled: Boolean! scope: TriggerScope! triggeringCondition: TriggeringCondition!
  triggeredAction: TriggeredAction!
}
union TriggerScope = Project | ArtifactPortfolio | ArtifactSequence | Entity
type ArtifactPortfolio { id: ID! name: String! }
type ArtifactSequence { id: ID! name: String! }
union TriggeringCondition = FilterEventTriggeringCondition
type FilterEventTriggeringCondition {
  eventType: EventTriggeringConditionType! filter: JSONString!
}
union TriggeredAction = NotificationTriggeredAction | GenericWebhookTriggeredAction
  | NoOpTriggeredAction | QueueJobTriggeredAction | ARIATriggeredAction
union Integration = SlackIntegration | GenericWebhookIntegration
type SlackIntegration { id: ID! teamName: String! channelName: String! }
type GenericWebhookIntegration { id: ID! name: String! urlEndpoint: String! }
type NotificationTriggeredAction { integration: Integration! title: String message: String
                                  severity: AlertSeverity }
type GenericWebhookTriggeredAction { integration: Integration! requestPayload: JSONString }
type NoOpTriggeredAction { noOp: Boolean }
type RunQueue { id: ID! name: String! }
type QueueJobTriggeredAction { queue: RunQueue template: JSONString }
type ARIATriggeredAction { prompt: String }

input UpdateFilterTriggerInput {
  id: ID! name: String description: String enabled: Boolean scopeType: TriggerScopeType
  scopeID: ID triggeringEventType: EventTriggeringConditionType eventFilter: JSONString
  triggeredActionType: TriggeredActionType triggeredActionConfig: TriggeredActionConfig
  clientMutationId: String
}
input TriggeredActionConfig {
  notificationActionInput: NotificationActionInput
  genericWebhookActionInput: GenericWebhookActionInput
  noOpActionInput: NoOpTriggeredActionInput
}
input NotificationActionInput { integrationID: ID! title: String message: String
                                severity: AlertSeverity }
input GenericWebhookActionInput { integrationID: ID! requestPayload: JSONString }
input NoOpTriggeredActionInput { noOp: Boolean }
type UpdateFilterTriggerPayload { trigger: Trigger }
"""

ACTION_TYPES = {
    "NOTIFICATION": "NotificationTriggeredAction",
    "GENERIC_WEBHOOK": "GenericWebhookTriggeredAction",
}


@dataclass
class Fault:
    """What to do to one request instead of answering it normally."""

    status: int = 0  # answer with this status (429, 500, ...)
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False  # close the connection without an answer
    delay: float = 0.0  # wait this long first
    die: bool = False  # stop the whole server (it answers nothing more)
    operation: str | None = None  # only for this GraphQL operation (None: the next request)
    drip: float = 0.0  # send the body one byte every this many seconds
    drip_headers: bool = False  # with `drip`: the status line and headers too
    body: bytes | None = None  # these bytes instead of the JSON answer
    answer: Callable[[Any, dict[str, Any]], Any] | None = None  # (payload, variables) -> sent
    echo_key: bool = False  # an error repeating the request's Authorization header and key
    sticky: bool = False  # applies to every matching request, until removed


def retry_after(value: str, status: int = 429, operation: str | None = None) -> Fault:
    """An error status asking the client to wait `value` (seconds or an HTTP date)."""
    return Fault(status=status, headers={"Retry-After": value}, operation=operation)


def _at(payload: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        payload = payload[step]
    return payload


def replace_at(path: tuple[Any, ...], value: Any, operation: str | None = None) -> Fault:
    """The answer with the value at `path` (keys and indexes from the top) set to `value`; an
    empty path replaces the whole answer."""

    def answer(payload: Any, _variables: dict[str, Any]) -> Any:
        if not path:
            return value
        _at(payload, path[:-1])[path[-1]] = value
        return payload

    return Fault(answer=answer, operation=operation)


def remove_at(path: tuple[Any, ...], operation: str | None = None) -> Fault:
    """The answer without the key at `path` (a node without `id`, a trigger without `scope`)."""

    def answer(payload: Any, _variables: dict[str, Any]) -> Any:
        del _at(payload, path[:-1])[path[-1]]
        return payload

    return Fault(answer=answer, operation=operation)


def _paging(page_info: Callable[[dict[str, Any]], dict[str, Any]]) -> Fault:
    """Every views listing page with `page_info(variables)` as its pageInfo, for ever."""

    def answer(payload: Any, variables: dict[str, Any]) -> Any:
        project = (payload.get("data") or {}).get("project")
        if project and project.get("allViews"):
            project["allViews"]["pageInfo"] = page_info(variables)
        return payload

    return Fault(answer=answer, operation="WbmigrateViews", sticky=True)


def repeated_cursor() -> Fault:
    """Listings that always say more follow, with the same cursor."""
    return _paging(lambda _v: {"hasNextPage": True, "endCursor": "same-cursor"})


def missing_cursor() -> Fault:
    """Listings that say more follow but give no cursor."""
    return _paging(lambda _v: {"hasNextPage": True, "endCursor": None})


def endless_pages() -> Fault:
    """Listings whose every page has a new cursor and says more follow."""
    pages = itertools.count(1)
    return _paging(lambda _v: {"hasNextPage": True, "endCursor": f"page-{next(pages)}"})


@dataclass
class Request:
    operation: str
    variables: dict[str, Any]
    authorized: bool
    headers: dict[str, str]
    body: str


USER = {"id": "VXNlcjox", "username": "alice", "email": "alice@example.com", "photoUrl": ""}
HISTORY_STEPS = 10  # rows of history each run has logged


class WandbState:
    """One project: its views, triggers and runs. `first_id`: where its object numbers start
    (`View:101`, ...); on one server, give each further project its own thousand (1001,
    2001, ...). `forbidden`: every request about it answers 403 "permission denied"."""

    def __init__(
        self,
        entity: str = "team",
        project: str = "async-rl",
        *,
        first_id: int = 101,
        forbidden: bool = False,
    ) -> None:
        self.entity, self.project = entity, project
        self.first_id, self.forbidden = first_id, forbidden
        # The default project keeps the id it always had; further ones are numbered.
        self.project_id = _b64(f"Project:{project if first_id == 101 else first_id}")
        self.views: dict[str, dict[str, Any]] = {}
        self.triggers: dict[str, dict[str, Any]] = {}
        self.runs: dict[str, dict[str, Any]] = {}
        self._ids = itertools.count(first_id)
        self._clock = itertools.count(1)
        self.lock = threading.RLock()

    def now(self) -> str:
        """A fresh, later timestamp on every call (W&B moves updatedAt on each save)."""
        tick = next(self._clock)
        return f"2026-11-29T{tick // 3600 % 24:02d}:{tick // 60 % 60:02d}:{tick % 60:02d}Z"

    def add_view(
        self,
        spec: str,
        type_: str = "runs",
        display_name: str = "Report",
        parent_id: str | None = None,
        description: str = "",
    ) -> str:
        number = next(self._ids)
        view_id = _b64(f"View:{number}")
        self.views[view_id] = {
            "id": view_id,
            "name": f"view{number}",
            "type": type_,
            "displayName": display_name,
            "description": description,
            "spec": spec,
            "updatedAt": self.now(),
            "createdAt": "2026-09-01T00:00:00Z",
            "parentId": parent_id,
            "entityName": self.entity,
            "projectName": self.project,
            "user": dict(USER),
        }
        return view_id

    def add_run(
        self,
        name: str,
        created_at: str,
        history_keys: Iterable[str],
        summary_keys: Iterable[str] | None = None,
        state: str = "finished",
        display_name: str | None = None,
    ) -> str:
        """A run that logged `history_keys` for HISTORY_STEPS steps; its summary holds the last
        value of `summary_keys` (default: the history keys) and, as W&B's does, `_runtime`,
        `_step`, `_timestamp` and `_wandb`. Returns the run's id."""
        history = list(history_keys)
        summary = history if summary_keys is None else list(summary_keys)
        last = HISTORY_STEPS - 1
        run_id = _b64(f"Run:v1:{name}:{self.project}:{self.entity}")
        if run_id in self.runs:
            raise ValueError(f"run {name} is already in {self.entity}/{self.project}")
        counts = [{"type": "number", "count": HISTORY_STEPS}]
        logged = ["_step", "_runtime", "_timestamp", *history]
        self.runs[run_id] = {
            "id": run_id,
            "projectId": self.first_id,
            "name": name,
            "displayName": display_name or name,
            "state": state,
            "createdAt": created_at,
            "heartbeatAt": created_at,
            "historyLineCount": HISTORY_STEPS,
            "summaryMetrics": json.dumps(
                {key: round(1 / (i + 2), 4) for i, key in enumerate(summary)}
                | {"_runtime": 120.5, "_step": last, "_timestamp": 1.7e9}
                | {"_wandb": {"runtime": 120}}
            ),
            "historyKeys": {
                "keys": {key: {"typeCounts": counts} for key in logged},
                "lastStep": last,
            },
            "config": "{}",
            "systemMetrics": "{}",
            "tags": [],
            "readOnly": False,
            "user": {**USER, "name": "Alice"},
        }
        return run_id

    def add_trigger(self, trigger: dict[str, Any]) -> str:
        """Store a trigger given in the SDK's shape (`event`/`action` keys)."""
        number = next(self._ids)
        stored = copy.deepcopy(trigger)
        trigger_id = stored["id"] = _b64(f"Trigger:{number}")
        stored["triggeringCondition"] = stored.pop("event")
        stored["triggeredAction"] = stored.pop("action")
        stored["scope"] = {"__typename": "Project", "id": self.project_id, "name": self.project}
        stored["updatedAt"] = self.now()
        self.triggers[trigger_id] = stored
        return trigger_id

    def load_demo(self, folder: Path) -> None:
        """The demo project: raw specs become views, triggers become automations."""
        for path in sorted(folder.rglob("*.json")):
            data = json.loads(path.read_text())
            if path.parent.name == "automations":
                self.add_trigger(data)
            else:
                kind = "project-view" if path.parent.name == "workspaces" else "runs"
                title = path.stem.replace("-", " ").capitalize()
                self.add_view(json.dumps(data, separators=(",", ":")), kind, title)

    def edit_view(self, view_id: str, change: Callable[[str], str]) -> None:
        """A colleague edits a view in the UI."""
        with self.lock:
            view = self.views[view_id]
            view["spec"] = change(view["spec"])
            view["updatedAt"] = self.now()

    def edit(self, object_id: str, change: Callable[[Any], Any]) -> None:
        """A colleague edits a view's spec (`change(spec) -> spec`) or a trigger
        (`change(trigger)` edits it in place) in the UI."""
        with self.lock:
            if object_id in self.views:
                self.edit_view(object_id, change)
                return
            change(self.triggers[object_id])
            self.triggers[object_id]["updatedAt"] = self.now()

    def owns(self, object_id: str) -> bool:
        return object_id in self.views or object_id in self.triggers or object_id in self.runs

    def find(self, title: str) -> str:
        for view_id, view in self.views.items():
            if view["displayName"] == title:
                return view_id
        for trigger_id, trigger in self.triggers.items():
            if trigger["name"] == title:
                return trigger_id
        raise KeyError(title)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _pass_through(value: Any) -> Any:
    return value


PERMISSION = "PERMISSION_ERROR"  # W&B's code for a refusal, answered with HTTP 403


def _allowed(state: WandbState) -> WandbState:
    if state.forbidden:
        raise GraphQLError("permission denied", extensions={"code": PERMISSION})
    return state


def _open(project: dict[str, Any]) -> WandbState:
    """The state behind a project answer, unless that project is forbidden."""
    state: WandbState = project["_state"]
    return _allowed(state)


def _page(
    items: list[dict[str, Any]], after: str | None, first: int, cursor: Callable[[Any], str]
) -> dict[str, Any]:
    """One page of a connection: the items after the one whose cursor is `after`."""
    cursors = [cursor(item) for item in items]
    start = cursors.index(after) + 1 if after in cursors else 0
    page = items[start : start + first]
    return {
        "edges": [{"node": item, "cursor": cursor(item)} for item in page],
        "pageInfo": {
            "endCursor": cursor(page[-1]) if page else None,
            "hasNextPage": start + len(page) < len(items),
        },
    }


RUN_FIELDS = {
    "name": "name",
    "displayName": "displayName",
    "display_name": "displayName",
    "state": "state",
    "createdAt": "createdAt",
    "created_at": "createdAt",
    "heartbeatAt": "heartbeatAt",
    "heartbeat_at": "heartbeatAt",
}
TESTS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": lambda value, given: value == given,
    "$ne": lambda value, given: value != given,
    "$in": lambda value, given: value in given,
    "$nin": lambda value, given: value not in given,
    "$gt": lambda value, given: value > given,
    "$gte": lambda value, given: value >= given,
    "$lt": lambda value, given: value < given,
    "$lte": lambda value, given: value <= given,
}


def _matches(run: dict[str, Any], filters: dict[str, Any]) -> bool:
    """Whether a run passes W&B's MongoDB-like run filters (the part this server knows; any
    other field or operator is an error, so no test passes by a filter ignored)."""
    for key, wanted in filters.items():
        if key in ("$and", "$or"):
            results = [_matches(run, part) for part in wanted]
            if not (all(results) if key == "$and" else any(results)):
                return False
            continue
        if key not in RUN_FIELDS:
            raise GraphQLError(f"unsupported run filter field {key!r}")
        value = run[RUN_FIELDS[key]]
        tests = wanted if isinstance(wanted, dict) else {"$eq": wanted}
        for operator, given in tests.items():
            if operator not in TESTS:
                raise GraphQLError(f"unsupported run filter operator {operator!r}")
            if not TESTS[operator](value, given):
                return False
    return True


def _runs(project: dict[str, Any], filters: Any, order: str | None) -> list[dict[str, Any]]:
    """A project's runs that pass `filters` (a JSON string or object), in `order`
    ("[+-]created_at" or "[+-]heartbeat_at"; newest first when none, as W&B): the stored runs
    themselves, for the caller to copy what it answers."""
    if isinstance(filters, str):
        filters = json.loads(filters or "{}")
    field = (order or "-created_at").lstrip("+-")
    if field not in ("created_at", "heartbeat_at"):
        raise GraphQLError(f"unsupported run order {order!r}")
    state = _open(project)
    with state.lock:
        runs = [r for r in state.runs.values() if _matches(r, filters or {})]
    runs.sort(key=lambda r: r[RUN_FIELDS[field]], reverse=(order or "-").startswith("-"))
    return runs


class WandbServer:
    """A running server: `url`, `api_key`, `state` (the first project), `states` (every
    project: `more`, and those given to `add_project`), `requests`, and fault controls."""

    def __init__(
        self, state: WandbState, api_key: str = "k" * 40, more: Iterable[WandbState] = ()
    ) -> None:
        self.state = state
        self.states = [state]
        for other in more:
            self.add_project(other)
        self.api_key = api_key
        self.requests: list[Request] = []
        self.timings: list[tuple[str, str | None, float]] = []  # operation, viewType, seconds
        self.faults: list[Fault] = []  # consumed one per /graphql request
        self.chaos: Callable[[str], Fault | None] | None = None  # a fault, or not, per request
        self.latency = 0.0
        self.hooks: dict[str, Callable[[dict[str, Any]], None]] = {}
        self.dead = False  # died of a fault: no connection kept alive is answered either
        self.schema = self._schema()
        self._documents: dict[str, tuple[DocumentNode | None, list[GraphQLError]]] = {}
        self._lock = threading.Lock()
        self._http = _QuietServer(("127.0.0.1", 0), self._handler())
        self._http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    def add_project(self, state: WandbState) -> WandbState:
        """Serve one more project (of the same entity or another); returns it."""
        for other in self.states:
            if (other.entity, other.project) == (state.entity, state.project):
                raise ValueError(f"{state.entity}/{state.project} is served already")
            if other.first_id // 1000 == state.first_id // 1000:
                raise ValueError(
                    f"{state.entity}/{state.project} numbers its objects in the thousand of "
                    f"{other.entity}/{other.project}: give it first_id=1001, 2001, ..."
                )
        self.states.append(state)
        return state

    def __enter__(self) -> WandbServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()

    def edit_on(
        self, operation: str, object_id: str, change: Callable[[Any], Any], times: int = 1
    ) -> None:
        """A colleague's edit of `object_id` (see `WandbState.edit`), made just before the
        server answers `operation` about it (the `id` of its variables or input) or, for a
        listing, before the next one; `times` times at most. Replaces that operation's hook."""
        left = [times]

        def hook(variables: dict[str, Any]) -> None:
            about = variables.get("id") or (variables.get("input") or {}).get("id")
            if left[0] > 0 and about in (object_id, None):
                left[0] -= 1
                self._owner(object_id).edit(object_id, change)

        self.hooks[operation] = hook

    def mutations(self) -> list[Request]:
        return [
            r
            for r in self.requests
            if r.operation.startswith(("Wbmigrate", "Update"))
            and ("upsertView" in r.body or "updateFilterTrigger" in r.body)
        ]

    # --- GraphQL ---------------------------------------------------------------------------

    def _schema(self) -> Any:
        schema = build_schema(SDL)
        assert schema.query_type
        assert schema.mutation_type
        for name in ("JSONString", "JSON", "DateTime"):
            scalar = schema.type_map[name]
            assert isinstance(scalar, GraphQLScalarType)
            scalar.serialize = scalar.parse_value = _pass_through  # type: ignore[method-assign]
        resolvers = {
            "viewer": lambda *_: {
                **USER,
                "entity": self.state.entity,
                "flags": "{}",
                "teams": {"edges": []},
            },
            "serverInfo": lambda *_: {
                "features": [{"name": "QUERY_AUTOMATIONS_ON_ENTITY", "isEnabled": True}]
            },
            "project": self._project,
            "view": self._view,
            "entity": self._entity,
            "models": self._models,
        }
        for name, resolve in resolvers.items():
            schema.query_type.fields[name].resolve = resolve
        mutations = {"upsertView": self._upsert_view, "updateFilterTrigger": self._update_trigger}
        for name, resolve in mutations.items():
            schema.mutation_type.fields[name].resolve = resolve
        fields = {
            ("Project", "allViews"): self._all_views,
            ("Project", "triggers"): lambda p, _i: [
                self._trigger_out(t) for t in _open(p).triggers.values()
            ],
            ("Project", "runCount"): lambda p, _i, filters=None: len(_runs(p, filters, None)),
            ("Project", "runs"): self._runs,
            ("Project", "run"): self._run,
            ("Entity", "triggers"): self._entity_triggers,
            ("Entity", "projects"): lambda e, _i, **page: self._models(None, _i, e["name"], **page),
        }
        for (type_name, name), resolve in fields.items():
            schema.type_map[type_name].fields[name].resolve = resolve  # type: ignore[attr-defined]
        return schema

    def _project_out(self, state: WandbState | None = None) -> dict[str, Any]:
        state = state or self.state
        return {
            "__typename": "Project",
            "id": state.project_id,
            "internalId": "internal-1" if state.first_id == 101 else f"internal-{state.first_id}",
            "name": state.project,
            "entityName": state.entity,
            "createdAt": "2026-09-01T00:00:00",
            "isBenchmark": False,
            "readOnly": False,
            "user": None,
            "_state": state,  # never sent: the resolvers of the project's fields read it
        }

    def _owner(self, object_id: str) -> WandbState:
        """The project holding a view, trigger or run (the first project when none does)."""
        return next((s for s in self.states if s.owns(object_id)), self.state)

    def _project(
        self, _root: Any, _info: Any, name: str | None = None, entityName: str | None = None
    ) -> Any:
        for state in self.states:
            if (entityName, name) == (state.entity, state.project):
                return self._project_out(_allowed(state))
        return None

    def _models(
        self,
        _root: Any,
        _info: Any,
        entityName: str | None = None,
        after: str | None = None,
        first: int | None = None,
        **_: Any,
    ) -> Any:
        """An entity's projects, forbidden ones too (W&B lists what it then refuses)."""
        entity = entityName or self.state.entity
        projects = [self._project_out(s) for s in self.states if s.entity == entity]
        return _page(projects, after, first or 50, lambda p: p["id"])

    def _view_out(self, view: dict[str, Any], state: WandbState | None = None) -> dict[str, Any]:
        return {**view, "project": self._project_out(state)}

    def _view(self, _root: Any, _info: Any, id: str) -> Any:
        state = _allowed(self._owner(id))
        with state.lock:
            view = state.views.get(id)
            return self._view_out(copy.deepcopy(view), state) if view else None

    def _all_views(
        self,
        project: Any,
        _info: Any,
        viewType: str = "runs",
        viewName: str | None = None,
        first: int = 50,
        after: str | None = None,
        **_: Any,
    ) -> Any:
        state = _open(project)
        with state.lock:
            views = [
                v
                for v in state.views.values()
                if v["type"] == viewType and (viewName is None or v["name"] == viewName)
            ]
            page = _page(views, after, first or 50, lambda v: v["id"])
            for edge in page["edges"]:
                edge["node"] = self._view_out(copy.deepcopy(edge["node"]), state)
            return page

    def _runs(
        self,
        project: Any,
        _info: Any,
        filters: Any = None,
        after: str | None = None,
        first: int | None = None,
        order: str | None = None,
    ) -> Any:
        page = _page(_runs(project, filters, order), after, first or 50, lambda r: r["id"])
        with _open(project).lock:  # a copy of the page alone: listing all runs stays cheap
            for edge in page["edges"]:
                edge["node"] = copy.deepcopy(edge["node"])
        return page

    def _run(self, project: Any, _info: Any, name: str) -> Any:
        state = _open(project)
        with state.lock:
            run = next((r for r in state.runs.values() if r["name"] == name), None)
            return copy.deepcopy(run)

    def _upsert_view(self, _root: Any, _info: Any, input: dict[str, Any]) -> Any:
        view_id = input.get("id")
        if view_id is None:
            named = (input.get("entityName"), input.get("projectName"))
            state = next((s for s in self.states if (s.entity, s.project) == named), self.state)
        else:
            state = self._owner(view_id)
        with _allowed(state).lock:
            if view_id is None:
                view_id = state.add_view(
                    input.get("spec") or "{}",
                    input.get("type", "runs"),
                    input.get("displayName", ""),
                )
                inserted = True
            elif view_id in state.views:
                inserted = False
            else:
                raise ValueError(f"view {view_id} not found")
            view = state.views[view_id]
            for key in ("name", "type", "displayName", "description", "spec", "parentId"):
                if key in input and input[key] is not None:
                    view[key] = input[key]
            view["updatedAt"] = state.now()
            return {"view": self._view_out(copy.deepcopy(view), state), "inserted": inserted}

    def _trigger_out(self, trigger: dict[str, Any]) -> dict[str, Any]:
        return copy.deepcopy(trigger)

    def _entity(self, _root: Any, _info: Any, name: str) -> Any:
        if all(state.entity != name for state in self.states):
            return None
        return {
            "__typename": "Entity",
            "id": _b64(f"Entity:{name}"),
            "name": name,
            "entityType": "team",
        }

    def _entity_triggers(
        self,
        entity: Any,
        _info: Any,
        filters: str | None = None,
        first: int | None = None,
        after: str | None = None,
        **_: Any,
    ) -> Any:
        """The triggers of the entity's projects (a forbidden project's are not shown), those
        of one name when `filters` is `{"name": ...}` (as W&B's SDK filters them); another
        filter is an error."""
        wanted = json.loads(filters) if filters else {}
        if not isinstance(wanted, dict) or set(wanted) - {"name"}:
            raise ValueError(f"unsupported trigger filter: {filters}")
        triggers = [
            self._trigger_out(t)
            for state in self.states
            if state.entity == entity["name"] and not state.forbidden
            for t in state.triggers.values()
            if "name" not in wanted or t["name"] == wanted["name"]
        ]
        return _page(triggers, after, first or len(triggers) or 1, lambda t: t["id"])

    def _update_trigger(self, _root: Any, _info: Any, input: dict[str, Any]) -> Any:
        state = _allowed(self._owner(input["id"]))
        with state.lock:
            trigger = state.triggers.get(input["id"])
            if trigger is None:
                raise ValueError(f"trigger {input['id']} not found")
            for key in ("name", "description", "enabled"):
                if key in input:
                    trigger[key] = input[key]
            if "eventFilter" in input:
                trigger["triggeringCondition"]["filter"] = input["eventFilter"]
            if "triggeringEventType" in input:
                trigger["triggeringCondition"]["eventType"] = input["triggeringEventType"]
            config = input.get("triggeredActionConfig") or {}
            action = trigger["triggeredAction"]
            if "notificationActionInput" in config:
                given = config["notificationActionInput"]
                action.update({k: given[k] for k in ("title", "message", "severity") if k in given})
            if "genericWebhookActionInput" in config:
                action["requestPayload"] = config["genericWebhookActionInput"].get("requestPayload")
            action["__typename"] = ACTION_TYPES.get(
                input.get("triggeredActionType", ""), action["__typename"]
            )
            trigger["updatedAt"] = state.now()
            return {"trigger": self._trigger_out(trigger)}

    # --- HTTP ------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: with Nagle's algorithm on, the body waits
            # for the client's delayed ACK, 40 ms a response (as no real server does).
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                if self.path == "/_stats":  # for benchmarks: each request's time in the server
                    with server._lock:
                        self._send(200, {"timings": server.timings})
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.rstrip("/") != "/graphql":
                    self._send(404, {"error": "not found"})
                    return
                started = time.perf_counter()
                self.recorded: Request | None = None
                server._serve(self, body.decode())
                served = time.perf_counter() - started - server.latency  # beyond the latency
                if self.recorded is not None:
                    operation, variables = self.recorded.operation, self.recorded.variables
                    with server._lock:
                        server.timings.append((operation, variables.get("viewType"), served))

            def _send(
                self,
                status: int,
                payload: Any,
                headers: dict[str, str] | None = None,
                fault: Fault | None = None,
                reason: str | None = None,
            ) -> None:
                self._write(status, json.dumps(payload).encode(), headers, fault, reason)

            def _write(
                self,
                status: int,
                data: bytes,
                headers: dict[str, str] | None = None,
                fault: Fault | None = None,
                reason: str | None = None,
            ) -> None:
                self.send_response(status, reason)
                for key, value in {"Content-Type": "application/json", **(headers or {})}.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                if fault is None or not fault.drip:
                    self.end_headers()
                    self.wfile.write(data)
                    return
                buffer: list[bytes] = vars(self)["_headers_buffer"]  # set by send_header
                head = b"".join(buffer)
                buffer.clear()
                self._drip(head + b"\r\n", fault.drip if fault.drip_headers else 0.0)
                self._drip(data, fault.drip)

            def _drip(self, data: bytes, every: float) -> None:
                """Send `data` one byte every `every` seconds (at once when 0), until the
                client hangs up."""
                if not every:
                    self.wfile.write(data)
                    return
                for i in range(len(data)):
                    try:
                        self.wfile.write(data[i : i + 1])
                        self.wfile.flush()
                    except OSError:
                        self.close_connection = True
                        return
                    time.sleep(every)

        return Handler

    def _serve(self, handler: Any, body: str) -> None:
        if self.dead:
            handler.close_connection = True
            return
        try:
            request = json.loads(body)
        except ValueError:
            handler._send(400, {"errors": [{"message": "body is not JSON"}]})
            return
        query = request.get("query") or ""
        variables = request.get("variables") or {}
        match = re.search(r"\b(?:query|mutation)\s+(\w+)", query)
        operation = request.get("operationName") or (match.group(1) if match else "")
        expected = "Basic " + _b64(f"api:{self.api_key}")
        authorized = handler.headers.get("Authorization") == expected
        handler.recorded = Request(operation, variables, authorized, dict(handler.headers), body)
        with self._lock:
            self.requests.append(handler.recorded)
            fault = next((f for f in self.faults if f.operation in (None, operation)), None)
            if fault is not None and not fault.sticky:
                self.faults.remove(fault)
            elif self.chaos is not None:
                fault = self.chaos(operation)
        time.sleep(self.latency + (fault.delay if fault else 0))
        if fault and fault.die:
            self.dead = True
            threading.Thread(target=self.stop, daemon=True).start()
            handler.close_connection = True
            return
        if fault and fault.drop:
            handler.close_connection = True
            handler.connection.shutdown(2)
            return
        if fault and fault.echo_key:
            self._echo(handler, fault)
            return
        if fault and fault.body is not None:
            handler._write(fault.status or 200, fault.body, fault.headers, fault)
            return
        if fault and fault.status:
            injected = {"errors": [{"message": "injected"}]}
            handler._send(fault.status, injected, fault.headers, fault)
            return
        if not authorized:
            handler._send(401, {"errors": [{"message": "unauthorized"}]})
            return
        hook = self.hooks.get(operation)
        if hook:
            ids = [v for k, v in variables.items() if re.fullmatch(r"id\d+", k)]
            for each in [{"id": i} for i in ids] or [variables]:
                hook(each)
        result = self._execute(query, variables)
        payload: Any = {"data": result.data}
        refused = [e for e in result.errors or [] if (e.extensions or {}).get("code") == PERMISSION]
        if result.errors:
            payload["errors"] = [
                {"message": e.message, "path": e.path, "extensions": e.extensions}
                if e in refused
                else {"message": e.message}
                for e in result.errors
            ]
        if fault and fault.answer:
            payload = fault.answer(payload, variables)
        handler._send(403 if refused else 200, payload, fault.headers if fault else None, fault)

    def _execute(self, query: str, variables: dict[str, Any]) -> ExecutionResult:
        """What `graphql_sync` answers, each query text parsed and validated once, as
        production GraphQL servers cache it (clients send the same few texts): graphql-core
        validating an 8-alias read anew cost this server more than the read itself."""
        document, errors = self._documents.get(query) or self._prepared(query)
        if errors:
            return ExecutionResult(None, errors)
        assert document is not None
        result = execute_sync(self.schema, document, variable_values=variables)
        assert isinstance(result, ExecutionResult)
        return result

    def _prepared(self, query: str) -> tuple[DocumentNode | None, list[GraphQLError]]:
        try:
            document = parse(query)
        except GraphQLError as error:
            return None, [error]
        prepared = document, validate(self.schema, document)
        if len(self._documents) < 256:  # a test sending endless new texts: parsed each time
            self._documents[query] = prepared
        return prepared

    def _echo(self, handler: Any, fault: Fault) -> None:
        """An error that repeats the request's Authorization header and API key."""
        auth = handler.headers.get("Authorization") or ""
        try:
            key = base64.b64decode(auth.removeprefix("Basic ")).decode().partition(":")[2]
        except ValueError:
            key = ""
        message = f"request refused: Authorization: {auth} (api key {key})"
        status = fault.status or 200
        payload: dict[str, Any] = {"errors": [{"message": message}], "error": message}
        if status == 200:
            payload["data"] = None
        handler._send(status, payload, fault.headers, fault, reason=message)


class _QuietServer(ThreadingHTTPServer):
    """A server that prints nothing when a client hangs up mid-answer (as clients that give
    up on a dripping answer do): the tests read stderr. Other errors are printed."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


def _load_state(data: dict[str, Any], first_id: int = 101) -> WandbState:
    """A project from a state file: `entity`, `project`, `views`, `triggers`, `runs` (each the
    keyword arguments of `add_run`), `forbidden`, `first_id`."""
    state = WandbState(
        data.get("entity", "team"),
        data.get("project", "async-rl"),
        first_id=data.get("first_id", first_id),
        forbidden=data.get("forbidden", False),
    )
    for view in data.get("views", []):
        state.add_view(view["spec"], view.get("type", "runs"), view.get("displayName", "Report"))
    for trigger in data.get("triggers", []):
        state.add_trigger(trigger)
    for run in data.get("runs", []):
        state.add_run(**run)
    return state


def serve(state_file: Path, latency: float) -> None:
    """Run a server holding the project of a JSON file (and the further ones of its
    `projects` list) until stopped (benchmarks). Prints its URL and API key on the first line
    of stdout."""
    data = json.loads(state_file.read_text())
    more = [_load_state(d, 1000 * i + 1) for i, d in enumerate(data.get("projects", []), 1)]
    server = WandbServer(_load_state(data), more=more)
    server.latency = latency
    server._thread.start()
    print(f"{server.url} {server.api_key}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    serve(Path(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 0.0)
