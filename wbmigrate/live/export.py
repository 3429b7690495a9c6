"""`wbmigrate export`: a live project as dashboards-as-code files, one readable JSON per object.

Each file holds the object's metadata and its parsed spec, pretty-printed with the key order
W&B stored; `plan DIR` and `check` read them back. A name is a readable stem (the title, and the
id cleaned) plus a short hash of the exact id: it never lands outside the target folder, and two
objects never share a file, whatever their titles and ids (`id+1` and `id/1` clean to the same
stem; ids that differ only in case meet on a case-insensitive disk). An object that cannot be
exported is reported on its own and the others are written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from wbmigrate.errors import WbmigrateError
from wbmigrate.files import export_document
from wbmigrate.live.backup import safe_name, short_hash
from wbmigrate.live.objects import LiveObject, ObjectRef
from wbmigrate.safe_write import write_text

FOLDERS = {"report": "reports", "workspace": "workspaces", "automation": "automations"}


@dataclass(frozen=True)
class Exported:
    """One object's export: the file written, or why there is none."""

    obj: ObjectRef
    path: Path | None
    error: str = ""


def export_text(obj: LiveObject) -> str:
    """The object as an export file (see `files.export_document`)."""
    if obj.view is not None:
        metadata, spec = obj.view.node(), json.loads(obj.view.spec)
    else:
        metadata, spec = {"id": obj.id, "name": obj.title, "updatedAt": obj.updated_at}, obj.trigger
    return export_document(obj.kind, obj.entity, obj.project, {**metadata, "spec": spec})


def file_name(obj: LiveObject) -> str:
    """`[draft-]<title>--<id>-<hash of the id>.json`, at most about 130 characters."""
    slug = re.sub(r"[^a-z0-9]+", "-", obj.title.lower()).strip("-")[:60] or obj.kind
    draft = "draft-" if obj.is_draft else ""
    return f"{draft}{slug}--{safe_name(obj.id)[:48]}-{short_hash(obj.id)}.json"


def prepare_folder(folder: Path) -> None:
    """Make the export folder, or refuse in one line before anything is read."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise WbmigrateError(f"{folder}: a file is in the way, not a folder") from None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise WbmigrateError(f"{folder}: cannot make the export folder ({reason})") from None


def export_objects(objects: Iterable[LiveObject], folder: Path) -> list[Exported]:
    """Write one file per object under `folder`; what became of each, in order."""
    results = []
    root, taken = folder.resolve(), set()
    for obj in objects:
        path = folder / FOLDERS[obj.kind] / file_name(obj)
        key = str(path).casefold()
        if root not in path.resolve().parents:
            results.append(Exported(obj.ref, None, f"{path} would be outside {folder}"))
            continue
        if key in taken:
            results.append(Exported(obj.ref, None, f"{path.name} is another object's file"))
            continue
        taken.add(key)
        results.append(_export_one(obj, path))
    return results


def _export_one(obj: LiveObject, path: Path) -> Exported:
    """Write one object's file, or say why not; a file is written whole or not at all."""
    try:
        text = export_text(obj)
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # of the text written: the spec read was JSON
        bad = ascii(exc.object[exc.start : exc.end])
        return Exported(obj.ref, None, f"holds {bad}, which UTF-8 cannot store; not exported")
    except ValueError:
        return Exported(obj.ref, None, "its spec is not valid JSON; not exported")
    except RecursionError:  # deeper than json reads or writes (about 1,000 levels)
        return Exported(obj.ref, None, "its spec is nested too deeply; not exported")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, text)
    except (OSError, WbmigrateError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc).splitlines()[0]
        return Exported(obj.ref, None, f"cannot write {path}: {reason}")
    return Exported(obj.ref, path)
