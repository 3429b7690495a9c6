"""What the test server holds: projects (`WandbState`: views, triggers, runs), the requests it
recorded, and the state files `serve` loads."""

from __future__ import annotations

import base64
import copy
import itertools
import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphql import GraphQLError


@dataclass(frozen=True)
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
        self.project_id = b64(f"Project:{project if first_id == 101 else first_id}")
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
        view_id = b64(f"View:{number}")
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
        run_id = b64(f"Run:v1:{name}:{self.project}:{self.entity}")
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
        trigger_id = stored["id"] = b64(f"Trigger:{number}")
        stored["triggeringCondition"] = stored.pop("event")
        stored["triggeredAction"] = stored.pop("action")
        stored["scope"] = {"__typename": "Project", "id": self.project_id, "name": self.project}
        stored["updatedAt"] = self.now()
        self.triggers[trigger_id] = stored
        return trigger_id

    def load_demo(self, folder: Path, draft: bool = False) -> None:
        """The demo project: raw specs become views, triggers become automations; with `draft`,
        a draft of the report "Async health" too (as the docs' examples show it)."""
        for path in sorted(folder.rglob("*.json")):
            data = json.loads(path.read_text())
            if path.parent.name == "automations":
                self.add_trigger(data)
            else:
                kind = "project-view" if path.parent.name == "workspaces" else "runs"
                title = path.stem.replace("-", " ").capitalize()
                self.add_view(json.dumps(data, separators=(",", ":")), kind, title)
        if draft:
            report = self.find("Async health")
            spec = self.views[report]["spec"]
            self.add_view(spec, "runs/draft", "Async health", parent_id=report)

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

    def select_runs(self, filters: Any, order: str | None) -> list[dict[str, Any]]:
        """The runs that pass `filters` (a JSON string or object), in `order`
        ("[+-]created_at" or "[+-]heartbeat_at"; newest first when none, as W&B): the stored
        runs themselves, for the caller to copy what it answers."""
        if isinstance(filters, str):
            filters = json.loads(filters or "{}")
        field = (order or "-created_at").lstrip("+-")
        if field not in ("created_at", "heartbeat_at"):
            raise GraphQLError(f"unsupported run order {order!r}")
        with self.lock:
            runs = [r for r in self.runs.values() if _matches(r, filters or {})]
        runs.sort(key=lambda r: r[RUN_FIELDS[field]], reverse=(order or "-").startswith("-"))
        return runs


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


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


def load_state(data: dict[str, Any], first_id: int = 101) -> WandbState:
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
