"""`wbmigrate export`: a live project as dashboards-as-code files, one readable JSON per object.

Each file holds the object's metadata and its parsed spec, pretty-printed with the key order
W&B stored; `plan DIR` and `check` read them back. Names come from titles and ids, cleaned so a
file can never land outside the target folder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from wbmigrate.errors import WbmigrateError
from wbmigrate.files import export_document
from wbmigrate.live.backup import safe_name
from wbmigrate.live.objects import LiveObject
from wbmigrate.safe_write import write_text

FOLDERS = {"report": "reports", "workspace": "workspaces", "automation": "automations"}


def export_text(obj: LiveObject) -> str:
    """The object as an export file (see `files.export_document`)."""
    if obj.view is not None:
        metadata = {**obj.view.node(), "spec": json.loads(obj.view.spec)}
    else:
        metadata = {
            "id": obj.id,
            "name": obj.title,
            "updatedAt": obj.updated_at,
            "spec": obj.trigger,
        }
    return export_document(obj.kind, obj.entity, obj.project, metadata)


def file_name(obj: LiveObject) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", obj.title.lower()).strip("-")[:60] or obj.kind
    draft = "draft-" if obj.is_draft else ""
    return f"{draft}{slug}--{safe_name(obj.id)}.json"


def export_objects(objects: Iterable[LiveObject], folder: Path) -> list[Path]:
    """Write one file per object under `folder`; the paths written, in order."""
    written = []
    root = folder.resolve()
    for obj in objects:
        path = folder / FOLDERS[obj.kind] / file_name(obj)
        if root not in path.resolve().parents:
            raise WbmigrateError(f"refusing to write {path}: outside {folder}")
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            text = export_text(obj)
        except ValueError:
            raise WbmigrateError(f"{obj.kind} {obj.id}: its spec is not valid JSON") from None
        write_text(path, text)
        written.append(path)
    return written
