"""The requests of the apply floor, found before timing: `wbmigrate apply` is run once on a
server without added latency and every object it changed is read back. The changed objects, in
the order they are listed, make batches of `jobs`; each batch is one batched read (views by id,
automations by name: a request each) and one write per object, sending what wbmigrate wrote
and asking for nothing back but the id."""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import chain
from pathlib import Path
from typing import Any

from benchmarks.measure import run, wbmigrate
from benchmarks.server import ENTITY, PROJECT, Server, running
from wbmigrate.live.client import Client
from wbmigrate.live.objects import DRAFT, REPORT, WORKSPACE
from wbmigrate.live.queries import get_triggers, get_views
from wbmigrate.live.triggers import trigger_input

UPSERT = (
    "mutation FloorUpsertView($input: UpsertViewInput!) "
    "{ upsertView(input: $input) { view { id } } }"
)
UPDATE = (
    "mutation FloorUpdateTrigger($input: UpdateFilterTriggerInput!) "
    "{ updateFilterTrigger(input: $input) { trigger { id } } }"
)
Body = dict[str, Any]


def written_by_apply(
    state: Path, folder: Path, env: Callable[[Server], dict[str, str]], jobs: int
) -> Path:
    """A JSON file of the batches: `[{"reads": [body, ...], "writes": [body, ...]}, ...]`."""
    with running(state, latency=0.0) as server:
        client = Client(server.url, server.api_key)
        before = _objects(client)
        backups = str(folder / "backup")
        run(
            wbmigrate("apply", f"{ENTITY}/{PROJECT}", "--yes", "--backup-dir", backups), env(server)
        )
        after = _objects(client)
    changed = [node for key, node in after.items() if node != before[key]]
    batches = [_batch(changed[i : i + jobs]) for i in range(0, len(changed), jobs)]
    path = folder / "batches.json"
    path.write_text(json.dumps(batches))
    return path


def _objects(client: Client) -> dict[str, dict[str, Any]]:
    """Every view (as the API spells it) and automation of the project, by id, without the
    time of its last save."""
    found: dict[str, dict[str, Any]] = {}
    for view_type in (REPORT, DRAFT, WORKSPACE):
        for view in chain.from_iterable(client.view_pages(ENTITY, PROJECT, view_type)):
            found[view.id] = {**view.node(), "updatedAt": None, "kind": "view"}
    for trigger in client.triggers(ENTITY, PROJECT):
        found[trigger["id"]] = {**trigger, "updatedAt": None, "kind": "trigger"}
    return found


def _batch(nodes: list[dict[str, Any]]) -> dict[str, list[Body]]:
    views = [n["id"] for n in nodes if n["kind"] == "view"]
    names = [n["name"] for n in nodes if n["kind"] == "trigger"]
    reads = []
    if views:
        ids = {f"id{i}": view_id for i, view_id in enumerate(views)}
        reads.append({"query": get_views(len(views)), "variables": ids})
    if names:
        filters = {f"name{i}": json.dumps({"name": name}) for i, name in enumerate(names)}
        reads.append(
            {"query": get_triggers(len(names)), "variables": {"entity": ENTITY, **filters}}
        )
    return {"reads": reads, "writes": [_write(node) for node in nodes]}


def _write(node: dict[str, Any]) -> Body:
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
