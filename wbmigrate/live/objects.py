"""A live W&B project as objects wbmigrate can plan and write: views and automations.

Each object keeps what it was fetched as (the spec string exactly as received, the trigger as
returned) and a fingerprint, so a write can refuse an object that changed in the meantime.
Listing a project is `live.listing`; reading many objects again at once, `live.reader`; what a
trigger's write sends, `live.triggers`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from wbmigrate.kinds import VIEW_TYPES
from wbmigrate.kinds.automation import unwritable
from wbmigrate.live.census import project_url
from wbmigrate.live.client import Client, View
from wbmigrate.live.shapes import ShapeError
from wbmigrate.live.triggers import UnsupportedTrigger, trigger_input

if TYPE_CHECKING:
    from wbmigrate.plan import Source


REPORT, DRAFT, WORKSPACE = "runs", "runs/draft", "project-view"


@dataclass(frozen=True)
class Fingerprint:
    updated_at: str | None
    sha256: str


@dataclass(frozen=True)
class ObjectRef:
    """Which object a result is about: enough to name it, whether or not it was read."""

    kind: str  # report | workspace | automation
    id: str
    title: str
    is_draft: bool = False

    def __str__(self) -> str:
        return f'{self.kind} "{self.title}"' + (" (draft)" if self.is_draft else "")


@dataclass(frozen=True)
class LiveObject:
    """A view (report, draft, workspace) or a project automation, as fetched."""

    kind: str  # report | workspace | automation
    id: str
    title: str  # the display name (views) or trigger name
    text: str  # the view's spec string as received, or the trigger as JSON
    updated_at: str | None
    entity: str
    project: str
    view: View | None = None
    trigger: dict[str, Any] | None = None

    @property
    def is_draft(self) -> bool:
        return self.view is not None and self.view.type == DRAFT

    @property
    def ref(self) -> ObjectRef:
        return ObjectRef(self.kind, self.id, self.title, self.is_draft)

    @property
    def fingerprint(self) -> Fingerprint:
        return Fingerprint(self.updated_at, hashlib.sha256(self.text.encode()).hexdigest())

    @property
    def problem(self) -> str | None:
        """Why the object cannot be planned as W&B gave it: an automation without its
        condition or action (whose metric could not be seen, or written back), or one W&B's
        answer lacks a field of, which a write would have to copy back: said up front, not
        at apply. (An action W&B takes no write of is the engine's to plan for review.) A
        spec holding a lone surrogate (valid JSON, `"\\udc80"`, but no text) is this object's
        error alone: it has no UTF-8 bytes to digest or write back."""
        if not self.text.isascii():
            try:
                self.text.encode()
            except UnicodeEncodeError:
                return "W&B's spec holds a lone surrogate (no Unicode text): left as it is"
        if self.trigger is None:
            return None
        missing = [k for k in ("event", "action") if not isinstance(self.trigger.get(k), dict)]
        if missing:
            return f"W&B gave no {' or '.join(missing)} for this automation"
        if unwritable(self.trigger) is None:
            try:
                trigger_input(self.trigger)
            except UnsupportedTrigger as exc:
                return str(exc)
        return None

    def source(self, base_url: str = "") -> Source:
        """The object to plan; with `base_url` (its API host), with its link in the app."""
        from wbmigrate.plan import Source  # loaded by then: a plan's first request is out

        name = f"{self.title} (draft)" if self.is_draft else self.title
        url = self.url(base_url) if base_url else ""
        return Source(name, self.id, self.text, self.kind, self.problem, url=url)

    def url(self, base_url: str) -> str:
        """Where the W&B app shows it: a report's page (a draft's report's: drafts have none
        of their own), a saved workspace, the project's automations. Every part from W&B is
        percent-encoded, a report's title slugged to letters, digits and `-`."""
        project = project_url(base_url, self.entity, self.project)
        if self.kind == "automation":
            return f"{project}/automations"
        view = self.view
        if self.kind == "workspace":
            saved = re.fullmatch(r"nw-(.+)-v", view.name if view else "")
            return f"{project}?nw={quote(saved[1], safe='')}" if saved else f"{project}/workspace"
        view_id = view.parent_id if view and view.parent_id and self.is_draft else self.id
        slug = re.sub("[^A-Za-z0-9]+", "-", self.title).strip("-")
        return f"{project}/reports/{slug}--{quote(view_id.rstrip('='), safe='')}"

    @classmethod
    def of_view(cls, view: View) -> LiveObject:
        kind, title, at = VIEW_TYPES[view.type], view.display_name or view.name, view.updated_at
        return cls(kind, view.id, title, view.spec, at, view.entity, view.project, view=view)

    @classmethod
    def of_trigger(cls, trigger: dict[str, Any], entity: str, project: str) -> LiveObject:
        trigger_id, title = trigger["id"], trigger.get("name") or ""
        text, at = _trigger_text(trigger), trigger.get("updatedAt")
        return cls("automation", trigger_id, title, text, at, entity, project, trigger=trigger)


def _trigger_text(trigger: dict[str, Any]) -> str:
    """A trigger as stable JSON text (the API gives objects, not one spec string)."""
    try:
        return json.dumps(trigger, ensure_ascii=False, sort_keys=True)
    except RecursionError:  # orjson reads 1,024 levels, json writes fewer: one line, no traceback
        where = f"automation {str(trigger.get('id'))[:40]}"
        raise ShapeError(f"{where}: nested too deeply to read") from None


def reread(client: Client, obj: LiveObject) -> LiveObject | None:
    """The object as it is now, or None when it no longer exists."""
    if obj.view is not None:
        view = client.view(obj.id, obj.entity, obj.project)
        return LiveObject.of_view(view) if view else None
    for trigger in client.triggers(obj.entity, obj.project):
        if trigger.get("id") == obj.id:
            return LiveObject.of_trigger(trigger, obj.entity, obj.project)
    return None


def write(client: Client, obj: LiveObject, new_text: str) -> str | None:
    """Save a view's new spec, or a trigger's new fields, everything else as fetched; the
    time W&B gives the save (`updatedAt`), as the mutation's answer shows it."""
    if obj.view is not None:
        return client.upsert_view(obj.view, new_text)
    return client.update_trigger(trigger_input(json.loads(new_text)))
