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
from typing import Any

from wbmigrate.errors import WbmigrateError
from wbmigrate.live.backup import safe_name
from wbmigrate.live.objects import LiveObject

FORMAT = "wbmigrate-export/1"
FOLDERS = {"report": "reports", "workspace": "workspaces", "automation": "automations"}


def export_document(obj: LiveObject) -> dict[str, Any]:
    document: dict[str, Any] = {
        "wbmigrate": FORMAT,
        "kind": obj.kind,
        "entity": obj.entity,
        "project": obj.project,
    }
    if obj.view is not None:
        document.update(obj.view.node())
        document["spec"] = json.loads(obj.view.spec)
    else:
        document.update(
            {"id": obj.id, "name": obj.title, "updatedAt": obj.updated_at, "spec": obj.trigger}
        )
    return document


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
            document = export_document(obj)
        except ValueError:
            raise WbmigrateError(f"{obj.kind} {obj.id}: its spec is not valid JSON") from None
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written
