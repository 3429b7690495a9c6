"""Automations (saved triggers): the metric a run-metric alert watches.

The metric name sits in `event.filter`, a JSON string holding `run_metric_filter` (and, in old
triggers, `metric_filter`, itself a JSON string). Those strings are edited in place, so the
double-encoded `run_filter` and every other byte stay as they were. An alert on a metric that
is gone with no equivalent is disabled, never deleted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from wbmigrate.edit.edits import Path, Set
from wbmigrate.engine.model import ChangeAction, NoteKind, Unlogged
from wbmigrate.engine.walk import Walk
from wbmigrate.mapping import Fate

NAME = "automation"
METRIC_FILTERS = ("threshold_filter", "change_filter", "zscore_filter")
DISABLED_PREFIX = "[wbmigrate] Disabled: "


def matches(spec: Any) -> bool:
    if not isinstance(spec, dict):
        return False
    has_event = "event" in spec or "triggeringCondition" in spec
    has_action = "action" in spec or "triggeredAction" in spec
    return spec.get("__typename") == "Trigger" or (has_event and has_action)


def walk(w: Walk, trigger: dict[str, Any]) -> None:
    w.text(("name",), trigger.get("name"), "name")
    w.text(("description",), _own_text(trigger.get("description")), "description")
    action_key = "action" if "action" in trigger else "triggeredAction"
    action = trigger.get(action_key)
    if isinstance(action, dict):
        for key in ("title", "message", "requestPayload"):
            w.text((action_key, key), action.get(key), f"action.{key}")
    event_key = "event" if "event" in trigger else "triggeringCondition"
    event = trigger.get(event_key)
    if not isinstance(event, dict) or not isinstance(event.get("filter"), str):
        return
    gone: list[Fate] = []
    w.embedded(
        (event_key, "filter"),
        event["filter"],
        lambda inner, doc: _filter(inner, doc, gone),
        "event.filter",
    )
    if gone:
        _disable(w, trigger, gone)


def _own_text(description: Any) -> Any:
    """A description without the line wbmigrate put first when it disabled the alert."""
    if isinstance(description, str) and description.startswith(DISABLED_PREFIX):
        return description.partition("\n")[2]
    return description


def _filter(w: Walk, document: Any, gone: list[Fate]) -> None:
    if not isinstance(document, dict):
        return
    for path, name in _conditions(document):
        _metric(w, path, name, gone)
    legacy = document.get("metric_filter")
    if isinstance(legacy, str):
        w.embedded(
            ("metric_filter",),
            legacy,
            lambda inner, doc: _metric(inner, ("name",), _get_name(doc), gone),
            "metric_filter",
        )
    elif isinstance(legacy, dict):
        _metric(w, ("metric_filter", "name"), legacy.get("name"), gone)


def _conditions(document: dict[str, Any]) -> Iterator[tuple[Path, Any]]:
    """The place and metric name of each condition of a run-metric filter."""
    metric_filter = document.get("run_metric_filter")
    if not isinstance(metric_filter, dict):
        return
    for kind in METRIC_FILTERS:
        condition = metric_filter.get(kind)
        if isinstance(condition, dict):
            yield ("run_metric_filter", kind, "name"), condition.get("name")


def _get_name(document: Any) -> Any:
    return document.get("name") if isinstance(document, dict) else None


def _metric(w: Walk, path: Path, name: Any, gone: list[Fate]) -> None:
    fate = w.fate(name) if isinstance(name, str) else None
    if fate is None:
        return
    if fate.new is None:
        gone.append(fate)
        return
    w.change(
        Set(path, fate.new), ChangeAction.RENAMED, name, fate.new, "metric", version=fate.version
    )
    w.note(
        path,
        NoteKind.WARNING,
        f"the alert now watches {fate.new}; runs that still log "
        f"{name} (older versions of the trainer) no longer trigger it",
        "metric",
    )
    w.shows(path, fate.new, "metric", Unlogged.ALERT)


def _disable(w: Walk, trigger: dict[str, Any], gone: list[Fate]) -> None:
    names = ", ".join(f.old for f in gone)
    if trigger.get("enabled") is False:
        w.note(
            ("enabled",),
            NoteKind.INFO,
            f"already disabled; it watches {names}, which is no longer logged",
            "enabled",
        )
        return
    step = w.migration.mapping_id + " " + gone[0].version
    why = f"{DISABLED_PREFIX}{names} is no longer logged ({step}: {gone[0].reason})\n"
    description = trigger.get("description") or ""
    w.change(
        Set(("enabled",), False),
        ChangeAction.DISABLED,
        trigger.get("enabled"),
        False,
        "enabled",
        version=gone[0].version,
    )
    w.change(
        Set(("description",), why + description),
        ChangeAction.DISABLED,
        description,
        why + description,
        "description",
    )
    w.note(
        ("enabled",),
        NoteKind.WARNING,
        f"alert disabled: {names} is no longer logged and nothing replaces it",
        "enabled",
    )


def annotate(w: Walk, trigger: dict[str, Any]) -> None:
    """Alerts carry no boundary note: the change to their description says enough."""


def alert_metrics(trigger: Any) -> list[str]:
    """The metric names a run-metric alert watches (none for other triggers)."""
    event = None
    if isinstance(trigger, dict):
        event = trigger.get("event") or trigger.get("triggeringCondition")
    document = json_in(event.get("filter")) if isinstance(event, dict) else None
    if not isinstance(document, dict):
        return []
    found = [name for _, name in _conditions(document) if isinstance(name, str)]
    legacy = document.get("metric_filter")
    legacy = json_in(legacy) if isinstance(legacy, str) else legacy
    if isinstance(legacy, dict) and isinstance(legacy.get("name"), str):
        found.append(legacy["name"])
    return found


def json_in(text: Any) -> Any:
    """The value a JSON string holds; None for anything else."""
    try:
        return json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
