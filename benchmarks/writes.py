"""The writes of the apply floor, found before timing: `wbmigrate apply` is run once on a server
without added latency, and every object it changed is read back; each becomes one request body
that sends what wbmigrate wrote (the new spec, or the trigger's new fields), asking for nothing
back but the id."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.measure import run, wbmigrate
from benchmarks.server import ENTITY, PROJECT, Server, running
from wbmigrate.live.client import Client
from wbmigrate.live.objects import DRAFT, REPORT, WORKSPACE
from wbmigrate.live.triggers import trigger_input

quiet = {"WANDB_SILENT": "true", "WANDB_ERROR_REPORTING": "false"}
UPSERT = (
    "mutation FloorUpsertView($input: UpsertViewInput!) "
    "{ upsertView(input: $input) { view { id } } }"
)
UPDATE = (
    "mutation FloorUpdateTrigger($input: UpdateFilterTriggerInput!) "
    "{ updateFilterTrigger(input: $input) { trigger { id } } }"
)


def written_by_apply(state: Path, folder: Path, env: Callable[[Server], dict[str, str]]) -> Path:
    """A file of request bodies, one a line: one write per object `apply` changed."""
    with running(state, latency=0.0) as server:
        client = Client(server.url, server.api_key)
        before = _objects(client)
        backups = str(folder / "backup")
        run(
            wbmigrate("apply", f"{ENTITY}/{PROJECT}", "--yes", "--backup-dir", backups), env(server)
        )
        after = _objects(client)
    bodies = [_body(node) for key, node in after.items() if node != before[key]]
    path = folder / "writes.jsonl"
    path.write_text("".join(json.dumps(body) + "\n" for body in bodies))
    return path


def _objects(client: Client) -> dict[str, dict[str, Any]]:
    """Every view (as the API spells it) and automation of the project, by id, without the
    time of its last save."""
    found: dict[str, dict[str, Any]] = {}
    for view_type in (REPORT, DRAFT, WORKSPACE):
        for view in client.views(ENTITY, PROJECT, view_type):
            found[view.id] = {**view.node(), "updatedAt": None, "kind": "view"}
    for trigger in client.triggers(ENTITY, PROJECT):
        found[trigger["id"]] = {**trigger, "updatedAt": None, "kind": "trigger"}
    return found


def _body(node: dict[str, Any]) -> dict[str, Any]:
    if node["kind"] == "trigger":
        return {"query": UPDATE, "variables": {"input": trigger_input(node)}}
    fields = {
        "id": node["id"],
        "entityName": ENTITY,
        "projectName": PROJECT,
        "name": node["name"],
        "type": node["type"],
        "displayName": node["displayName"],
        "description": node["description"],
        "spec": node["spec"],
    }
    if node["parentId"]:
        fields["parentId"] = node["parentId"]
    return {"query": UPSERT, "variables": {"input": fields}}
