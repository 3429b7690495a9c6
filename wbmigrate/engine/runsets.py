"""Run sets: the run filters, sort, grouping and run-table columns of reports and workspaces."""

from __future__ import annotations

from typing import Any

from wbmigrate.edit.edits import Path
from wbmigrate.engine.shapes import as_list
from wbmigrate.engine.walk import Walk
from wbmigrate.names import Accessor

# Sections of a {section, name} key that name a metric. W&B filters on summary values and on
# key presence (`keys_info`); `run` holds run fields, and a metric only by an SDK quirk.
METRIC_SECTIONS = ("summary", "keys_info", "run")
COLUMN_MAPS = ("columnVisible", "columnPinned", "columnWidths")


def walk_runset(w: Walk, path: Path, runset: Any) -> None:
    if not isinstance(runset, dict) or not w.may_hold(runset):
        return
    with w.at(f'run set "{runset.get("name", "")}"'):
        _filters(w, (*path, "filters"), runset.get("filters"), "filters")
        for i, group in enumerate(as_list(runset.get("grouping"))):
            _key_object(w, (*path, "grouping", i), group, f"grouping[{i}]")
        sort = runset.get("sort")
        if isinstance(sort, dict):
            _sort_keys(w, (*path, "sort", "keys"), as_list(sort.get("keys")))
            _key_object(w, (*path, "sort", "key"), sort.get("key"), "sort.key")  # legacy form
        feed = runset.get("runFeed")
        if isinstance(feed, dict):
            for name in COLUMN_MAPS:
                if isinstance(feed.get(name), dict):
                    w.key_map((*path, "runFeed", name), feed[name], f"runFeed.{name}")
            w.key_list(
                (*path, "runFeed", "columnOrder"),
                as_list(feed.get("columnOrder")),
                "runFeed.columnOrder",
            )


def _filters(w: Walk, path: Path, node: Any, field: str) -> None:
    """Both filter forms: v2 (`{filterFormat, filters:[...]}`, one level of groups) and the legacy
    tree (`{op:'OR', filters:[{op:'AND', filters:[...]}]}`). A leaf holds a {section, name} key."""
    if not isinstance(node, dict):
        return
    _key_object(w, (*path, "key"), node.get("key"), field)
    for i, child in enumerate(as_list(node.get("filters"))):
        _filters(w, (*path, "filters", i), child, f"{field}[{i}]")


def _sort_keys(w: Walk, path: Path, entries: list[Any]) -> None:
    """`sort.keys`, W&B's list of `{key: {section, name}, ascending}` entries, is a key list:
    dual mode keeps the old entry (runs from before the boundary sort by it) and adds one for
    the new key right after it, same section and direction. Entries outside the metric sections
    are hidden from the rule in place, so indices stay true."""
    metric = [e if _metric_key(_dig_key(e)) else None for e in entries]
    w.key_list(path, metric, "sort.keys", decode=_plain, inner=("key", "name"))


def _dig_key(entry: Any) -> Any:
    return entry.get("key") if isinstance(entry, dict) else None


def _metric_key(key: Any) -> bool:
    return isinstance(key, dict) and key.get("section") in METRIC_SECTIONS


def _key_object(w: Walk, path: Path, key: Any, field: str) -> None:
    if _metric_key(key):
        w.single((*path, "name"), key.get("name"), field, decode=_plain)


def _plain(value: Any) -> Accessor | None:
    return Accessor("", value) if isinstance(value, str) and value else None
