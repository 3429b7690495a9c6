"""The data-loss guard: what a write would lose that the plan does not explain.

Before an object is written, the spec about to be sent is counted (panels, series, run-set
filters, an alert's conditions) and compared with the spec as read. A count may only fall by
what the rewrite deletes on purpose (a panel whose metrics are all gone, an old key dropped in
replace mode); any other decrease is a bug, and the object is not written. Pure: no I/O.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from wbmigrate.edit.edits import Delete, Edit, EditConflict, materialize
from wbmigrate.engine.shapes import nodes
from wbmigrate.errors import WbmigrateError
from wbmigrate.kinds.automation import METRIC_FILTERS, json_in

WHAT = ("panels", "series", "filters", "conditions")


class DataLossError(WbmigrateError):
    """A write that would lose more than the plan removes."""


def parts(value: Any) -> Counter[str]:
    """Panels (objects with a `viewType`), series (entries of a `metrics` list), run-set filters
    (objects with a `key` and an `op`) and, in an alert, its conditions."""
    counts: Counter[str] = Counter()
    for at, node in nodes(value):
        if isinstance(node, dict):
            counts["panels"] += "viewType" in node
            counts["filters"] += "key" in node and "op" in node
            if isinstance(node.get("filter"), str) and "eventType" in node:
                counts["conditions"] += _conditions(node["filter"])
        elif isinstance(node, list) and at[-1:] == ("metrics",):
            counts["series"] += len(node)
    return +counts  # without zero counts


def _conditions(event_filter: str) -> int:
    """The conditions of an alert's `event.filter` (a JSON string holding JSON strings)."""
    document = json_in(event_filter)
    if not isinstance(document, dict):
        return 0
    metric = document.get("run_metric_filter")
    found = sum(1 for f in METRIC_FILTERS if isinstance(metric, dict) and metric.get(f))
    found += bool(document.get("metric_filter"))
    runs = json_in(document.get("run_filter"))
    if isinstance(runs, dict):
        found += sum(len(v) if isinstance(v, list) else 1 for v in runs.values())
    return found


def removed(original: Any, edits: Iterable[Edit]) -> Counter[str]:
    """What the rewrite deletes on purpose: the parts of every deleted subtree (an entry of
    a `metrics` list is one series)."""
    counts: Counter[str] = Counter()
    for edit in edits:
        if isinstance(edit, Delete):
            value = original
            for part in edit.path:
                value = value[part]
            counts += parts(value)
            if len(edit.path) > 1 and edit.path[-2] == "metrics" and isinstance(edit.path[-1], int):
                counts["series"] += 1
    return counts


def check_write(original: Any, edits: list[Edit], new_text: str) -> None:
    """Refuse to write `new_text` unless it is exactly the planned spec (the edits made to
    `original`) and has as many of every part as `original`, less what the edits delete on
    purpose."""
    try:
        sent = json.loads(new_text)
        planned = materialize(original, edits)
    except (ValueError, EditConflict, RecursionError) as exc:
        raise DataLossError(f"data-loss guard: the new spec cannot be checked ({exc})") from None
    if sent != planned:
        raise DataLossError("data-loss guard: the new text is not the planned spec; not written")
    missing = parts(original) - removed(original, edits) - parts(sent)  # positive counts only
    if lost := ", ".join(f"{missing[what]} {what}" for what in WHAT if missing[what]):
        raise DataLossError(
            f"data-loss guard: the new spec would lose {lost} that the plan does not remove; "
            "not written"
        )
