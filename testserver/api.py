"""The GraphQL side of the test server, without HTTP: the projects it serves (`Api.states`),
the schema's resolvers, and the execution of one query.

Longer than 300 lines: one resolver per field of the schema, each a few lines, read together."""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable, Iterable
from typing import Any

from graphql import (
    DocumentNode,
    ExecutionResult,
    GraphQLError,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLUnionType,
    build_schema,
    execute_sync,
    parse,
    validate,
)

from testserver.schema import ACTION_INPUTS, ACTION_TYPES, INTEGRATIONS, PERMISSION, SDL
from testserver.state import USER, WandbState, b64


def _pass_through(value: Any) -> Any:
    return value


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


DRAFTS = "runs/draft"


def _remove(schema: GraphQLSchema, part: str) -> None:
    """`part` out of a built schema: `Type.field`, `Union.Member`, or a type."""
    owner, _, name = part.partition(".")
    found = schema.type_map[owner]
    if isinstance(found, GraphQLUnionType):
        found.types = [t for t in found.types if t.name != name]
    elif name:
        assert isinstance(found, GraphQLObjectType)
        del found.fields[name]
    else:
        for union in schema.type_map.values():
            if isinstance(union, GraphQLUnionType):
                union.types = [t for t in union.types if t.name != owner]
        del schema.type_map[owner]


def _on_api(method: str) -> Callable[..., Any]:
    """A resolver calling `method` of the `Api` executing the query (its context)."""

    def resolve(root: Any, info: Any, **arguments: Any) -> Any:
        return getattr(info.context, method)(root, info, **arguments)

    return resolve


RESOLVERS = {
    ("Query", "viewer"): "_viewer",
    ("Query", "serverInfo"): "_server_info",
    ("Query", "project"): "_project",
    ("Query", "view"): "_view",
    ("Query", "entity"): "_entity",
    ("Query", "models"): "_models",
    ("Mutation", "upsertView"): "_upsert_view",
    ("Mutation", "updateFilterTrigger"): "_update_trigger",
    ("Mutation", "createFilterTrigger"): "_create_trigger",
    ("Project", "allViews"): "_all_views",
    ("Project", "triggers"): "_project_triggers",
    ("Project", "runCount"): "_run_count",
    ("Project", "runs"): "_runs",
    ("Project", "run"): "_run",
    ("Entity", "triggers"): "_entity_triggers",
    ("Entity", "projects"): "_entity_projects",
}


@functools.cache
def _schema(refused: frozenset[str]) -> GraphQLSchema:
    """The schema without the `refused` parts, its resolvers those of the executing `Api`:
    built once per process and shared by every server (building one took 16 ms a test)."""
    schema = build_schema(SDL)
    for name in ("JSONString", "JSON", "DateTime"):
        scalar = schema.type_map[name]
        assert isinstance(scalar, GraphQLScalarType)
        scalar.serialize = scalar.parse_value = _pass_through  # type: ignore[method-assign]
    for (type_name, name), method in RESOLVERS.items():
        schema.type_map[type_name].fields[name].resolve = _on_api(method)  # type: ignore[attr-defined]
    for part in sorted(refused):
        _remove(schema, part)
    return schema


Prepared = tuple[DocumentNode | None, list[GraphQLError]]
# Each query text parsed and validated once per schema and process, as production GraphQL
# servers cache it (clients send the same few texts): graphql-core validating an 8-alias read
# anew cost this server more than the read itself, and most of a live test's CPU.
_PREPARED: dict[tuple[frozenset[str], str], Prepared] = {}


def _prepared(refused: frozenset[str], query: str) -> Prepared:
    key = (refused, query)
    if key in _PREPARED:
        return _PREPARED[key]
    try:
        document = parse(query)
    except GraphQLError as error:
        return None, [error]
    prepared = document, validate(_schema(refused), document)
    if len(_PREPARED) < 1024:  # a test sending endless new texts: parsed each time
        _PREPARED[key] = prepared
    return prepared


class Api:
    """The projects served: `state` (the first), `states` (every one: `more`, and those given to
    `add_project`), and the GraphQL schema answering about them."""

    def __init__(self, state: WandbState, more: Iterable[WandbState] = ()) -> None:
        self.state = state
        self.states = [state]
        # The entity's Slack and webhook integrations by id, as an action shows them
        # (`{"__typename": "SlackIntegration", "id": ..., "teamName": ..., "channelName": ...}`):
        # what an action an input names by `integrationID` holds (else one with empty names).
        self.integrations: dict[str, dict[str, Any]] = {}
        for other in more:
            self.add_project(other)
        # serverInfo.features (name: enabled), as W&B answers them; wandb and wbmigrate gate on them
        # (the SDK creates z-score alerts only on a server that says it can)
        self.features = {
            "QUERY_AUTOMATIONS_ON_ENTITY": True,
            "AUTOMATION_EVENT_RUN_METRIC_ZSCORE": True,
        }
        self.refused: set[str] = set()  # see `refuse`

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

    def refuse(self, *parts: str) -> None:
        """Answer from now on as a server without `parts`, each a field (`View.parentId`,
        `Entity.triggers`, `ServerInfo.features`), a member of a union (`TriggerScope.Entity`),
        a type (`NoOpTriggeredAction`: gone from its union too) or the view type `runs/draft`.
        A query asking for one fails validation naming it, as an older W&B's would; a listing
        of drafts is an error naming their type."""
        self.refused |= set(parts)

    def _viewer(self, _root: Any, _info: Any) -> Any:
        return {**USER, "entity": self.state.entity, "flags": "{}", "teams": {"edges": []}}

    def _server_info(self, _root: Any, _info: Any) -> Any:
        return {"features": [{"name": k, "isEnabled": v} for k, v in self.features.items()]}

    def _project_triggers(self, project: Any, _info: Any) -> Any:
        return [self._trigger_out(t) for t in _open(project).triggers.values()]

    def _run_count(self, project: Any, _info: Any, filters: Any = None) -> Any:
        return len(_open(project).select_runs(filters, None))

    def _entity_projects(self, entity: Any, info: Any, **page: Any) -> Any:
        return self._models(None, info, entity["name"], **page)

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
        if viewType == DRAFTS and DRAFTS in self.refused:
            raise GraphQLError(f'unknown view type "{viewType}"')
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
        page = _page(
            _open(project).select_runs(filters, order), after, first or 50, lambda r: r["id"]
        )
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
            "id": b64(f"Entity:{name}"),
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
            self._update_action(trigger, input)
            trigger["updatedAt"] = state.now()
            return {"trigger": self._trigger_out(trigger)}

    def _create_trigger(self, _root: Any, _info: Any, input: dict[str, Any]) -> Any:
        """A new automation (as wandb's `create_automation` makes one) in the project its
        scope names (the first project for another scope; an entity's scope is kept)."""
        state = next((s for s in self.states if s.project_id == input["scopeID"]), self.state)
        with _allowed(state).lock:
            event = {"eventType": input["triggeringEventType"], "filter": input["eventFilter"]}
            fields = {k: input.get(k) for k in ("name", "description", "enabled")}
            trigger_id = state.add_trigger(
                {**fields, "createdAt": state.now(), "event": event, "action": {"__typename": ""}}
            )
            trigger = state.triggers[trigger_id]
            trigger["triggeringCondition"]["__typename"] = "FilterEventTriggeringCondition"
            if input["scopeType"] == "ENTITY":  # the entity's, not its project's
                entity = {"name": state.entity, "entityType": "team"}
                trigger["scope"] = {"__typename": "Entity", "id": input["scopeID"], **entity}
            self._update_action(trigger, input)
            return {"trigger": self._trigger_out(trigger)}

    def _update_action(self, trigger: dict[str, Any], input: dict[str, Any]) -> None:
        """The action's fields from its input; another type of action replaces it whole."""
        action = trigger["triggeredAction"]
        kind = ACTION_TYPES.get(input.get("triggeredActionType") or "", action["__typename"])
        if kind != action["__typename"]:
            action = trigger["triggeredAction"] = {"__typename": kind}
        for name, given in (input.get("triggeredActionConfig") or {}).items():
            if given is None:
                continue
            action.update({k: given[k] for k in ACTION_INPUTS[name] if k in given})
            named = given.get("integrationID")
            if named and (action.get("integration") or {}).get("id") != named:
                known = self.integrations.get(named) or {**INTEGRATIONS[name], "id": named}
                action["integration"] = copy.deepcopy(known)

    def execute(self, query: str, variables: dict[str, Any]) -> ExecutionResult:
        """What `graphql_sync` answers, the query text parsed and validated once (`_PREPARED`)."""
        refused = frozenset(self.refused - {DRAFTS})  # drafts: refused by `_all_views`
        document, errors = _prepared(refused, query)
        if errors:
            return ExecutionResult(None, errors)
        assert document is not None
        result = execute_sync(
            _schema(refused), document, variable_values=variables, context_value=self
        )
        assert isinstance(result, ExecutionResult)
        return result
