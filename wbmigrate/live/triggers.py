"""What a trigger's write sends: `UpdateFilterTriggerInput`, every field copied from the trigger
as W&B answered it, as wandb's own `update_automation` builds it (a trigger it cannot copy whole
is refused in one line). Which actions and scopes W&B takes back is `kinds.automation`'s."""

from __future__ import annotations

from typing import Any

from wbmigrate.errors import WbmigrateError
from wbmigrate.kinds.automation import ACTIONS, SCOPES, unwritable


class UnsupportedTrigger(WbmigrateError):
    """A trigger wbmigrate cannot write back whole (an action type W&B does not take back)."""


def trigger_input(trigger: dict[str, Any]) -> dict[str, Any]:
    """`UpdateFilterTriggerInput` for a trigger: a full replacement, every field copied. A
    trigger W&B answered without a part that must be copied is refused in one line."""
    scope, event, action = (_part(trigger, key) for key in ("scope", "event", "action"))
    why = unwritable(trigger)
    if why is not None:
        raise UnsupportedTrigger(f"{_named(trigger)}: {why}")
    kind = ACTIONS.get(str(action.get("__typename")))  # None: untyped (typed: `unwritable`)
    whole = (
        kind is not None
        and scope.get("__typename") in SCOPES
        and all(isinstance(v, str) for v in (trigger.get("name"), scope.get("id")))
        and all(isinstance(event.get(k), str) for k in ("eventType", "filter"))
        and isinstance(trigger.get("enabled"), bool)
        and all(isinstance(action.get(k), str) for k in kind.needed)
    )
    if kind is None or not whole:
        raise UnsupportedTrigger(f"{_named(trigger)}: W&B's answer lacks fields to copy back")
    config = dict(kind.fixed) | {k: action.get(k) for k in kind.copied}
    if kind.integration:
        config = {"integrationID": _part(trigger, "action", "integration").get("id")} | config
    return {
        "id": trigger["id"],
        "name": trigger["name"],
        "description": trigger.get("description"),
        "enabled": trigger["enabled"],
        "scopeType": SCOPES[scope["__typename"]],
        "scopeID": scope["id"],
        "triggeringEventType": event["eventType"],
        "eventFilter": event["filter"],
        "triggeredActionType": kind.type,
        "triggeredActionConfig": {kind.config: config},
    }


def _part(trigger: dict[str, Any], *keys: str) -> dict[str, Any]:
    """`trigger[keys[0]][keys[1]]...`, each an object, or a one-line refusal."""
    part: Any = trigger
    for key in keys:
        part = part.get(key)
        if not isinstance(part, dict):
            raise UnsupportedTrigger(f"{_named(trigger)}: W&B gave no {key} to copy back")
    return dict(part)


def _named(trigger: dict[str, Any]) -> str:
    name = trigger.get("name")
    return f"automation {name!r}" if isinstance(name, str) else f"automation {trigger.get('id')}"
