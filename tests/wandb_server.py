"""A local W&B-compatible GraphQL server for end-to-end tests, on 127.0.0.1.

It executes real GraphQL (graphql-core) against a schema written for the part of W&B's API that
wbmigrate and the wandb SDK use: views (reports, drafts, saved workspaces) and automations. It
checks HTTP Basic auth and records every request.

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
object_id, change)` installs one that edits a view's spec (or a trigger) once.
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
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from graphql import GraphQLScalarType, build_schema, graphql_sync

SDL = """
scalar JSONString
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
}
type Mutation {
  upsertView(input: UpsertViewInput!): UpsertViewPayload
  updateFilterTrigger(input: UpdateFilterTriggerInput!): UpdateFilterTriggerPayload
}

type User { id: ID! entity: String username: String email: String photoUrl: String
            flags: JSONString teams: EntityConnection }
type EntityConnection { edges: [EntityEdge!]! }
type EntityEdge { node: Entity }
type ServerInfo { features: [ServerFeature!]! }
type ServerFeature { name: String! isEnabled: Boolean! }
type PageInfo { endCursor: String hasNextPage: Boolean! startCursor: String
                hasPreviousPage: Boolean }

type Project {
  id: ID! internalId: ID name: String! entityName: String!
  allViews(viewType: String, viewName: String, userName: String, first: Int, after: String):
    ViewConnection
  triggers: [Trigger!]!
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


class WandbState:
    """The projects, views and triggers the server holds."""

    def __init__(self, entity: str = "team", project: str = "async-rl") -> None:
        self.entity, self.project = entity, project
        self.project_id = _b64(f"Project:{project}")
        self.views: dict[str, dict[str, Any]] = {}
        self.triggers: dict[str, dict[str, Any]] = {}
        self._ids = itertools.count(101)
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
            "user": {
                "id": "VXNlcjox",
                "username": "alice",
                "email": "alice@example.com",
                "photoUrl": "",
            },
        }
        return view_id

    def add_trigger(self, trigger: dict[str, Any]) -> str:
        """Store a trigger given in the SDK's shape (`event`/`action` keys)."""
        number = next(self._ids)
        stored = copy.deepcopy(trigger)
        stored["id"] = _b64(f"Trigger:{number}")
        stored["triggeringCondition"] = stored.pop("event")
        stored["triggeredAction"] = stored.pop("action")
        stored["scope"] = {"__typename": "Project", "id": self.project_id, "name": self.project}
        stored["updatedAt"] = self.now()
        self.triggers[stored["id"]] = stored
        return stored["id"]

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


class WandbServer:
    """A running server: `url`, `api_key`, `state`, `requests`, and fault controls."""

    def __init__(self, state: WandbState, api_key: str = "k" * 40) -> None:
        self.state = state
        self.api_key = api_key
        self.requests: list[Request] = []
        self.timings: list[tuple[str, str | None, float]] = []  # operation, viewType, seconds
        self.faults: list[Fault] = []  # consumed one per /graphql request
        self.chaos: Callable[[str], Fault | None] | None = None  # a fault, or not, per request
        self.latency = 0.0
        self.hooks: dict[str, Callable[[dict[str, Any]], None]] = {}
        self.schema = self._schema()
        self._lock = threading.Lock()
        self._http = _QuietServer(("127.0.0.1", 0), self._handler())
        self._http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

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
                self.state.edit(object_id, change)

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
        for name in ("JSONString", "DateTime"):
            scalar = schema.type_map[name]
            assert isinstance(scalar, GraphQLScalarType)
            scalar.serialize = scalar.parse_value = _pass_through  # type: ignore[method-assign]
        resolvers = {
            "viewer": lambda *_: {
                "id": "VXNlcjox",
                "entity": self.state.entity,
                "username": "alice",
                "email": "alice@example.com",
                "flags": "{}",
                "photoUrl": "",
                "teams": {"edges": []},
            },
            "serverInfo": lambda *_: {
                "features": [{"name": "QUERY_AUTOMATIONS_ON_ENTITY", "isEnabled": True}]
            },
            "project": self._project,
            "view": self._view,
            "entity": self._entity,
        }
        for name, resolve in resolvers.items():
            schema.query_type.fields[name].resolve = resolve
        mutations = {"upsertView": self._upsert_view, "updateFilterTrigger": self._update_trigger}
        for name, resolve in mutations.items():
            schema.mutation_type.fields[name].resolve = resolve
        project = schema.type_map["Project"]
        project.fields["allViews"].resolve = self._all_views  # type: ignore[attr-defined]
        project.fields["triggers"].resolve = lambda p, _i: [  # type: ignore[attr-defined]
            self._trigger_out(t) for t in self.state.triggers.values()
        ]
        entity = schema.type_map["Entity"]
        entity.fields["triggers"].resolve = self._entity_triggers  # type: ignore[attr-defined]
        return schema

    def _project_out(self) -> dict[str, Any]:
        state = self.state
        return {
            "__typename": "Project",
            "id": state.project_id,
            "internalId": "internal-1",
            "name": state.project,
            "entityName": state.entity,
        }

    def _project(
        self, _root: Any, _info: Any, name: str | None = None, entityName: str | None = None
    ) -> Any:
        if (entityName, name) != (self.state.entity, self.state.project):
            return None
        return self._project_out()

    def _view_out(self, view: dict[str, Any]) -> dict[str, Any]:
        return {**view, "project": self._project_out()}

    def _view(self, _root: Any, _info: Any, id: str) -> Any:
        with self.state.lock:
            view = self.state.views.get(id)
            return self._view_out(copy.deepcopy(view)) if view else None

    def _all_views(
        self,
        _project: Any,
        _info: Any,
        viewType: str = "runs",
        viewName: str | None = None,
        first: int = 50,
        after: str | None = None,
        **_: Any,
    ) -> Any:
        with self.state.lock:
            views = [
                v
                for v in self.state.views.values()
                if v["type"] == viewType and (viewName is None or v["name"] == viewName)
            ]
            ids = [v["id"] for v in views]
            start = ids.index(after) + 1 if after in ids else 0
            page = views[start : start + (first or 50)]
            return {
                "edges": [
                    {"node": self._view_out(copy.deepcopy(v)), "cursor": v["id"]} for v in page
                ],
                "pageInfo": {
                    "endCursor": page[-1]["id"] if page else None,
                    "hasNextPage": start + len(page) < len(views),
                },
            }

    def _upsert_view(self, _root: Any, _info: Any, input: dict[str, Any]) -> Any:
        with self.state.lock:
            view_id = input.get("id")
            if view_id is None:
                view_id = self.state.add_view(
                    input.get("spec") or "{}",
                    input.get("type", "runs"),
                    input.get("displayName", ""),
                )
                inserted = True
            elif view_id in self.state.views:
                inserted = False
            else:
                raise ValueError(f"view {view_id} not found")
            view = self.state.views[view_id]
            for key in ("name", "type", "displayName", "description", "spec", "parentId"):
                if key in input and input[key] is not None:
                    view[key] = input[key]
            view["updatedAt"] = self.state.now()
            return {"view": self._view_out(copy.deepcopy(view)), "inserted": inserted}

    def _trigger_out(self, trigger: dict[str, Any]) -> dict[str, Any]:
        return copy.deepcopy(trigger)

    def _entity(self, _root: Any, _info: Any, name: str) -> Any:
        if name != self.state.entity:
            return None
        return {
            "__typename": "Entity",
            "id": _b64(f"Entity:{name}"),
            "name": name,
            "entityType": "team",
        }

    def _entity_triggers(self, _entity: Any, _info: Any, **_: Any) -> Any:
        triggers = [self._trigger_out(t) for t in self.state.triggers.values()]
        return {
            "edges": [{"node": t, "cursor": t["id"]} for t in triggers],
            "pageInfo": {
                "endCursor": triggers[-1]["id"] if triggers else None,
                "hasNextPage": False,
            },
        }

    def _update_trigger(self, _root: Any, _info: Any, input: dict[str, Any]) -> Any:
        with self.state.lock:
            trigger = self.state.triggers.get(input["id"])
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
            trigger["updatedAt"] = self.state.now()
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
                head = b"".join(self._headers_buffer)  # type: ignore[attr-defined]
                self._headers_buffer = []  # type: ignore[attr-defined]
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
            body = {"errors": [{"message": "injected"}]}
            handler._send(fault.status, body, fault.headers, fault)
            return
        if not authorized:
            handler._send(401, {"errors": [{"message": "unauthorized"}]})
            return
        hook = self.hooks.get(operation)
        if hook:
            hook(variables)
        result = graphql_sync(self.schema, query, variable_values=variables)
        payload: Any = {"data": result.data}
        if result.errors:
            payload["errors"] = [{"message": e.message} for e in result.errors]
        if fault and fault.answer:
            payload = fault.answer(payload, variables)
        handler._send(200, payload, fault.headers if fault else None, fault)

    def _echo(self, handler: Any, fault: Fault) -> None:
        """An error that repeats the request's Authorization header and API key."""
        auth = handler.headers.get("Authorization") or ""
        try:
            key = base64.b64decode(auth.removeprefix("Basic ")).decode().partition(":")[2]
        except ValueError:
            key = ""
        message = f"request refused: Authorization: {auth} (api key {key})"
        status = fault.status or 200
        payload = {"errors": [{"message": message}], "error": message}
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


def serve(state_file: Path, latency: float) -> None:
    """Run a server holding the views and triggers of a JSON file until stopped (benchmarks).
    Prints its URL and API key on the first line of stdout."""
    data = json.loads(state_file.read_text())
    state = WandbState(data.get("entity", "team"), data.get("project", "async-rl"))
    for view in data.get("views", []):
        state.add_view(view["spec"], view.get("type", "runs"), view.get("displayName", "Report"))
    for trigger in data.get("triggers", []):
        state.add_trigger(trigger)
    server = WandbServer(state)
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
