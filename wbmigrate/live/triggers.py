"""What a trigger's write sends: `UpdateFilterTriggerInput`, every field copied from the trigger
as W&B answered it (a trigger it cannot copy whole is refused in one line)."""

from __future__ import annotations

from typing import Any

from wbmigrate.errors import WbmigrateError

SCOPE_TYPES = {
    "Project": "PROJECT",
    "ArtifactPortfolio": "ARTIFACT_COLLECTION",
    "ArtifactSequence": "ARTIFACT_COLLECTION",
}
# the actions wbmigrate can write back: their type, config field and the fields copied into it
ACTIONS = {
    "NotificationTriggeredAction": (
        "NOTIFICATION",
        "notificationActionInput",
        ("title", "message", "severity"),
    ),
    "GenericWebhookTriggeredAction": (
        "GENERIC_WEBHOOK",
        "genericWebhookActionInput",
        ("requestPayload",),
    ),
}


class UnsupportedTrigger(WbmigrateError):
    """A trigger wbmigrate cannot write back whole (an action type it does not know)."""


def trigger_input(trigger: dict[str, Any]) -> dict[str, Any]:
    """`UpdateFilterTriggerInput` for a trigger: a full replacement, every field copied. A
    trigger W&B answered without a part that must be copied is refused in one line."""
    scope, event, action = (_part(trigger, key) for key in ("scope", "event", "action"))
    whole = (
        scope.get("__typename") in SCOPE_TYPES
        and all(isinstance(v, str) for v in (trigger.get("name"), scope.get("id")))
        and all(isinstance(event.get(k), str) for k in ("eventType", "filter"))
        and isinstance(trigger.get("enabled"), bool)
    )
    if not whole:
        raise UnsupportedTrigger(f"{_named(trigger)}: W&B's answer lacks fields to copy back")
    fields: dict[str, Any] = {
        "id": trigger["id"],
        "name": trigger["name"],
        "description": trigger.get("description"),
        "enabled": trigger["enabled"],
        "scopeType": SCOPE_TYPES[scope["__typename"]],
        "scopeID": scope["id"],
        "triggeringEventType": event["eventType"],
        "eventFilter": event["filter"],
    }
    kind = action.get("__typename")
    if kind not in ACTIONS:
        raise UnsupportedTrigger(
            f"{_named(trigger)}: its action ({kind}) cannot be "
            "written back safely; change it in the W&B UI"
        )
    action_type, config, keys = ACTIONS[kind]
    integration = {"integrationID": _part(trigger, "action", "integration").get("id")}
    fields["triggeredActionType"] = action_type
    fields["triggeredActionConfig"] = {config: integration | {k: action.get(k) for k in keys}}
    return fields


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
