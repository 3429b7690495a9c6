"""Backups of one apply run: the original of every object, saved before it is written.

A folder (mode 0700) holds one file per object (mode 0600) and `manifest.json`, which says
what was migrated how, and for each object whether it was written and what was sent, so that
`rollback` can restore the exact originals and refuse objects edited since.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wbmigrate import __version__
from wbmigrate.errors import WbmigrateError
from wbmigrate.live import LiveObject, trigger_input
from wbmigrate.wandb_api import View

FORMAT = "wbmigrate-backup/1"
MANIFEST = "manifest.json"


class BackupError(WbmigrateError):
    """A backup folder that cannot be written or read."""


def digest(obj: LiveObject, text: str | None = None) -> str:
    """What identifies the state of an object: its spec, or a trigger's writable fields."""
    text = obj.text if text is None else text
    if obj.view is None:
        text = json.dumps(trigger_input(json.loads(text)), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def safe_name(text: str) -> str:
    """A file-name part from any text: no separators, no dots in front, bounded length."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "_", text).lstrip(".")[:80]
    return cleaned or "_"


def private_folder(path: Path) -> None:
    """Create `path` (and parents) with mode 0700; refuse one that holds files already."""
    if path.exists() and any(path.iterdir()):
        raise BackupError(f"{path} exists and is not empty")
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.chmod(0o700)


def write_private(path: Path, data: Any) -> None:
    """Write JSON to a new 0600 file, atomically (a temporary file renamed into place)."""
    temporary = path.with_name(path.name + ".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=2, ensure_ascii=False)
        out.write("\n")
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)


class Backup:
    """The backup folder of one apply run, written as the run goes."""

    def __init__(self, folder: Path, info: dict[str, Any]) -> None:
        private_folder(folder)
        self.folder = folder
        self._lock = threading.Lock()
        self._manifest: dict[str, Any] = {
            "format": FORMAT,
            "wbmigrate": __version__,
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            **info,
            "objects": [],
        }
        self._save_manifest()

    def save(self, obj: LiveObject) -> None:
        """Back up the object as fetched. Called before anything is sent to W&B."""
        name = f"{obj.kind}-{safe_name(obj.id)}.json"
        write_private(self.folder / name, _original(obj))
        with self._lock:
            self._manifest["objects"].append(
                {
                    "file": name,
                    "kind": obj.kind,
                    "id": obj.id,
                    "title": obj.title,
                    "status": "backed-up",
                }
            )
            self._save_manifest()

    def written(self, obj: LiveObject, sent: str) -> None:
        """Record that the new state was written and verified."""
        with self._lock:
            for entry in self._manifest["objects"]:
                if entry["id"] == obj.id:
                    entry["status"] = "written"
                    entry["written_sha256"] = digest(obj, sent)
            self._save_manifest()

    def _save_manifest(self) -> None:
        write_private(self.folder / MANIFEST, self._manifest)


def _original(obj: LiveObject) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "kind": obj.kind,
        "id": obj.id,
        "entity": obj.entity,
        "project": obj.project,
    }
    if obj.view is not None:
        entry["view"] = obj.view.node()
    else:
        entry["trigger"] = obj.trigger
    return entry


@dataclass(frozen=True)
class Restorable:
    """One backed-up object: the original, and the digest of what the run wrote (if it did)."""

    original: LiveObject
    written_sha256: str | None


def load_backup(folder: Path) -> tuple[dict[str, Any], list[Restorable]]:
    """The manifest and the objects of a backup folder."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BackupError(f"{folder}: not a wbmigrate backup folder ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupError(f"{folder}: not a wbmigrate backup folder (unknown format)")
    objects = []
    for entry in manifest.get("objects", []):
        path = folder / safe_name(entry["file"])
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BackupError(f"{path}: cannot read the backup ({exc})") from None
        objects.append(Restorable(_live(stored), entry.get("written_sha256")))
    # Objects were backed up as concurrent writes finished; restore them in a stable order.
    order = {"report": 0, "workspace": 1, "automation": 2}
    objects.sort(key=lambda r: (order[r.original.kind], r.original.is_draft, r.original.title))
    return manifest, objects


def _live(stored: dict[str, Any]) -> LiveObject:
    if "view" in stored:
        return LiveObject.of_view(
            View.from_node(stored["view"], stored["entity"], stored["project"])
        )
    return LiveObject.of_trigger(stored["trigger"], stored["entity"], stored["project"])
