"""What a W&B server supports, learnt as wandb's own SDK learns it, and what it refused.

Its features are asked once (`serverInfo { features { name isEnabled } }`, as wandb's
`_server_features` asks them; a server that refuses the field has none), and gate what
wbmigrate asks for as they gate the SDK: automations read by entity
(`QUERY_AUTOMATIONS_ON_ENTITY`), the entity-scope and ARIA fragments. A part of a query that a
server refuses anyway (an error quoting its name: `View.parentId`, the draft listing,
`Entity.triggers`, an action type) is asked no more for the rest of the run, and said once, in
one line, with what is done instead.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable
from typing import Any

from wbmigrate.live.shapes import GraphQLError, a_dict, a_list
from wbmigrate.live.transport import ApiError

FEATURES = "query WbmigrateServerFeatures { serverInfo { features { name isEnabled } } }"
ENTITY_TRIGGERS = "QUERY_AUTOMATIONS_ON_ENTITY"
# The optional parts of wbmigrate's queries: the names a server's refusal of each quotes, and
# what wbmigrate does without it.
OPTIONAL = {
    "parentId": (("parentId",), "drafts are saved without it (W&B keeps their report)"),
    "runs/draft": (("runs/draft",), "no drafts are listed"),
    "Entity.triggers": (("triggers", "Entity"), "automations are read per project"),
    "EntityScopeFields": (("TriggerScope", "Entity"), "entity-wide automations are not read whole"),
    "QueueJobActionFields": (("QueueJobTriggeredAction",), "queue-job actions are read by type"),
    "NoOpActionFields": (("NoOpTriggeredAction",), "no-op actions are read by type"),
    "AriaActionFields": (("ARIATriggeredAction",), "ARIA actions are read by type"),
}
# What is asked only when a feature says the server has it: automations by entity (wandb's
# `Api.automations` asks it first: servers from 0.83, else it walks the projects), and the
# fragments wandb leaves out without their feature (wandb/automations/_compat.py,
# `omit_automation_fragments`; no-op actions are ungated, queue jobs asked as the SDK's
# TriggerFields has them, and left out once refused).
GATED = {
    "Entity.triggers": ENTITY_TRIGGERS,
    "EntityScopeFields": "AUTOMATION_SCOPE_ENTITY",
    "AriaActionFields": "AUTOMATION_ACTION_ARIA",
}


class Support:
    """One server's features (asked on first use, once) and the optional parts it refused.
    `note` hears each fallback once. Thread-safe: listings run side by side."""

    def __init__(
        self,
        execute: Callable[[str, dict[str, Any]], dict[str, Any]],
        note: Callable[[str], None] | None = None,
    ) -> None:
        self._execute, self._note = execute, note
        self._features: dict[str, bool] | None = None
        self.refused: set[str] = set()
        self._said: set[str] = set()
        self._lock = threading.Lock()

    def enabled(self, feature: str) -> bool:
        with self._lock:
            if self._features is None:
                self._features = self._ask()
            return self._features.get(feature, False)

    def _ask(self) -> dict[str, bool]:
        try:
            data = self._execute(FEATURES, {})
        except ApiError as exc:  # an old server refuses the field: it has none of them
            if refusal(exc):  # (wandb's `feature_enabled` reads any failure as "off")
                return {}
            raise
        info = a_dict(data.get("serverInfo") or {}, "serverInfo")
        features = a_list(info.get("features") or [], "serverInfo.features")
        return {
            f["name"]: f.get("isEnabled") is True
            for f in features
            if isinstance(f, dict) and isinstance(f.get("name"), str)
        }

    def asks(self, part: str) -> bool:
        """Whether queries still ask for an optional part: not refused, and (a gated
        fragment) its feature on."""
        if part in self.refused:
            return False
        return part not in GATED or self.enabled(GATED[part])

    def refuse(self, exc: Exception, parts: Iterable[str]) -> bool:
        """Whether `exc` refuses one of `parts`: it is asked no more from now on, and said once.
        (A part another request refused meanwhile counts: that request is asked again too.)"""
        if not refusal(exc):
            return False
        named = next((p for p in parts if _names(exc, OPTIONAL[p][0])), None)
        if named is None:
            return False
        with self._lock:
            self.refused.add(named)
        self.say_once(named, f"W&B refused {named} ({exc}); {OPTIONAL[named][1]}")
        return True

    def say_once(self, key: str, line: str) -> None:
        """`line` to `note`, the first time `key` is said (whichever thread says it first)."""
        with self._lock:
            said = key in self._said
            self._said.add(key)
        if not said and self._note is not None:
            self._note(f"Note: {line}")


def refusal(exc: Exception) -> bool:
    """Whether an error answers the query's text (GraphQL errors, 400, 422), not the moment."""
    if isinstance(exc, GraphQLError):
        return True
    return isinstance(exc, ApiError) and exc.status in (400, 422)


def _names(exc: Exception, names: Iterable[str]) -> bool:
    """Whether the error's message quotes each of `names` (`'parentId'` or `"parentId"`), the
    names it suggests instead aside (graphql's "Did you mean 'ARIATriggeredAction', ...?")."""
    text = re.sub(r"Did you mean [^?]*\?", "", str(exc))
    return all(re.search(rf"""['"\\]{re.escape(name)}['"\\]""", text) for name in names)
