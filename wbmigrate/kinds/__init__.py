"""The kinds of W&B object wbmigrate rewrites, one module each, and how to tell them apart."""

from __future__ import annotations

from typing import Any, Protocol

from wbmigrate.engine.walk import Walk
from wbmigrate.errors import WbmigrateError
from wbmigrate.kinds import automation, report, workspace


class Kind(Protocol):
    NAME: str

    def matches(self, spec: Any) -> bool: ...

    def walk(self, w: Walk, spec: Any) -> None: ...

    def annotate(self, w: Walk, spec: Any) -> None: ...


KINDS: dict[str, Kind] = {module.NAME: module for module in (report, workspace, automation)}
# W&B view types (`View.type`) of each view kind.
VIEW_TYPES: dict[str, str] = {t: m.NAME for m in (report, workspace) for t in m.VIEW_TYPES}


class UnknownKindError(WbmigrateError):
    """A spec whose shape is none of the known kinds."""


def detect(spec: Any) -> str:
    """The kind a spec's shape shows: `blocks` (or 2019's `panelGroups`) for a report,
    `section` for a workspace, an event and an action for an automation."""
    for name, kind in KINDS.items():
        if kind.matches(spec):
            return name
    found = (
        f"an object with keys {', '.join(map(str, list(spec)[:6]))}"
        if isinstance(spec, dict)
        else (f"a JSON {type(spec).__name__}")
    )
    raise UnknownKindError(f"not a W&B report, workspace or automation spec ({found})")
