"""Automations (saved triggers): the metric a run-metric alert watches.

The metric name sits in `event.filter`, a JSON string holding `run_metric_filter` (and, in old
triggers, `metric_filter`, itself a JSON string). Those strings are edited in place, so the
double-encoded `run_filter` and every other byte stay as they were. An alert on a metric that
is gone with no equivalent is disabled, never deleted. One that W&B's API cannot take back
whole (`unwritable`: a queue-job action, say) is changed nowhere: what it needs is for review.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from wbmigrate.edit.edits import Path, Set
from wbmigrate.engine.model import ChangeAction, Note, NoteKind, Unlogged
from wbmigrate.engine.walk import Walk
from wbmigrate.mapping import Fate

NAME = "automation"
METRIC_FILTERS = ("threshold_filter", "change_filter", "zscore_filter")
DISABLED_PREFIX = "[wbmigrate] Disabled: "
# A trigger's scope, as W&B answers it (`scope.__typename`), and as its update takes it.
SCOPES = {
    "Project": "PROJECT",
    "ArtifactPortfolio": "ARTIFACT_COLLECTION",
    "ArtifactSequence": "ARTIFACT_COLLECTION",
    "Entity": "ENTITY",
}


@dataclass(frozen=True)
class Action:
    """How W&B's update takes an action back (`UpdateFilterTriggerInput`), as wandb's own
    `update_automation` writes it (wandb/automations/_inputs.py, `ActionSpecInput`)."""

    type: str  # triggeredActionType
    config: str  # its field of triggeredActionConfig
    copied: tuple[str, ...] = ()  # the action's fields copied into it
    integration: bool = False  # it names the action's integration (`integrationID`)
    fixed: tuple[tuple[str, Any], ...] = ()  # fields of constant value
    needed: tuple[str, ...] = ()  # copied fields the input takes no null for


# The actions W&B takes back. Not a queue job (`QueueJobTriggeredAction`) or a push
# notification: wandb's update refuses both (`INVALID_INPUT_ACTIONS`), as W&B's UI no longer
# makes them; nor an action of a type not known here.
ACTIONS = {
    "NotificationTriggeredAction": Action(
        "NOTIFICATION", "notificationActionInput", ("title", "message", "severity"), True
    ),
    "GenericWebhookTriggeredAction": Action(
        "GENERIC_WEBHOOK", "genericWebhookActionInput", ("requestPayload",), True
    ),
    "NoOpTriggeredAction": Action("NO_OP", "noOpActionInput", fixed=(("noOp", True),)),
    "ARIATriggeredAction": Action("ARIA", "ariaActionInput", ("prompt",), needed=("prompt",)),
}


def matches(spec: Any) -> bool:
    if not isinstance(spec, dict):
        return False
    has_event = "event" in spec or "triggeringCondition" in spec
    has_action = "action" in spec or "triggeredAction" in spec
    return spec.get("__typename") == "Trigger" or (has_event and has_action)


def walk(w: Walk, trigger: dict[str, Any]) -> None:
    why = unwritable(trigger)
    if why is None:
        _walk(w, trigger)
        return
    inner = Walk(w.migration, w.options)  # what the trigger needs, to be said, not made
    inner.where = w.where
    _walk(inner, trigger)
    needed = [
        Note(
            c.pointer,
            NoteKind.REVIEW,
            f"{_brief(c.old)} -> {_brief(c.new)} is needed, but {why}",
            c.where,
            c.field,
            c.path,
        )
        for c in inner.changes
    ]  # located as the change would be: at the name, inside an embedded filter too
    w.notes += needed + [n for n in inner.notes if n.kind is NoteKind.REVIEW]


def _brief(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "…"


def unwritable(trigger: dict[str, Any]) -> str | None:
    """Why W&B's API cannot take the trigger's action back (its update replaces every field,
    the action too), or None. An action without a type (a file's shorthand) is not judged
    here: the live side checks W&B's answers whole (`live.triggers`)."""
    action = trigger.get("action", trigger.get("triggeredAction"))
    kind = action.get("__typename") if isinstance(action, dict) else None
    if kind is None or kind in ACTIONS:
        return None
    return f"W&B's API takes no {kind} back (change it in the W&B UI)"


def _walk(w: Walk, trigger: dict[str, Any]) -> None:
    w.text(("name",), trigger.get("name"), "name")
    w.text(("description",), _own_text(trigger.get("description")), "description")
    action_key = "action" if "action" in trigger else "triggeredAction"
    action = trigger.get(action_key)
    if isinstance(action, dict):
        for key in ("title", "message", "requestPayload", "prompt"):
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
