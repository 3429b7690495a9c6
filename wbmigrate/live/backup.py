"""Backups of one apply run: the original of every object, saved before it is written.

A folder (mode 0700) holds one file per object (mode 0600), `manifest.json` (what was migrated
how) and `journal.jsonl`, a line per event appended as the run goes: an object backed up (with
the digest of what is about to be sent) and an object written. `rollback` restores the exact
originals and refuses objects edited since. Because the digest is on disk before the write,
a run killed between the write and its "written" line is still rolled back correctly.
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
from wbmigrate.live.client import View
from wbmigrate.live.objects import LiveObject, trigger_input
from wbmigrate.safe_write import PRIVATE_MODE, write_text

FORMAT = "wbmigrate-backup/2"
FORMATS = ("wbmigrate-backup/1", FORMAT)  # /1 kept its object list in the manifest
MANIFEST = "manifest.json"
JOURNAL = "journal.jsonl"


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
    """Write JSON to a 0600 file, safely."""
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", PRIVATE_MODE)


class Backup:
    """The backup folder of one apply run, written as the run goes. Each event costs one
    appended line, so a run of thousands of objects stays linear."""

    def __init__(self, folder: Path, info: dict[str, Any]) -> None:
        private_folder(folder)
        self.folder = folder
        self._lock = threading.Lock()
        manifest = {
            "format": FORMAT,
            "wbmigrate": __version__,
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            **info,
        }
        write_private(folder / MANIFEST, manifest)
        fd = os.open(folder / JOURNAL, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.close(fd)

    def save(self, obj: LiveObject, sending: str) -> None:
        """Back up the object as fetched, and what is about to be sent in its place. Called
        before anything is sent to W&B."""
        name = f"{obj.kind}-{safe_name(obj.id)}.json"
        write_private(self.folder / name, _original(obj))
        self._log(
            {
                "event": "backed-up",
                "file": name,
                "kind": obj.kind,
                "id": obj.id,
                "title": obj.title,
                "sending_sha256": digest(obj, sending),
            }
        )

    def written(self, obj: LiveObject) -> None:
        """Record that the new state was written and read back."""
        self._log({"event": "written", "id": obj.id})

    def _log(self, event: dict[str, Any]) -> None:
        line = json.dumps(event, ensure_ascii=False) + "\n"
        with self._lock, (self.folder / JOURNAL).open("a", encoding="utf-8") as out:
            out.write(line)
            out.flush()
            os.fsync(out.fileno())


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
    """One backed-up object: the original, the digest of what the run sent in its place
    (None: the run did not get as far as sending), and whether the write was confirmed."""

    original: LiveObject
    sent_sha256: str | None
    confirmed: bool = False


def load_backup(folder: Path) -> tuple[dict[str, Any], list[Restorable]]:
    """The manifest and the objects of a backup folder."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BackupError(f"{folder}: not a wbmigrate backup folder ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") not in FORMATS:
        raise BackupError(f"{folder}: not a wbmigrate backup folder (unknown format)")
    objects = []
    for entry in _entries(folder, manifest):
        path = folder / safe_name(entry["file"])
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BackupError(f"{path}: cannot read the backup ({exc})") from None
        objects.append(Restorable(_live(stored), entry["sent"], entry["status"] == "written"))
    # Objects were backed up as concurrent writes finished; restore them in a stable order.
    order = {"report": 0, "workspace": 1, "automation": 2}
    objects.sort(key=lambda r: (order[r.original.kind], r.original.is_draft, r.original.title))
    return manifest, objects


def _entries(folder: Path, manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """Each backed-up object: its file, what was sent, and whether the write was confirmed."""
    if "objects" in manifest:  # format /1
        return [{**e, "sent": e.get("written_sha256")} for e in manifest["objects"]]
    entries: dict[str, dict[str, Any]] = {}
    try:
        lines = (folder / JOURNAL).read_bytes().splitlines()
    except OSError as exc:
        raise BackupError(f"{folder}: cannot read {JOURNAL} ({exc})") from None
    for number, line in enumerate(lines, start=1):
        try:
            event = json.loads(line)  # bytes: a line cut inside a character is a ValueError
        except ValueError:
            if number == len(lines):
                break  # a line cut short by a crash: the write it announces never started
            raise BackupError(f"{folder / JOURNAL}:{number}: not a journal line") from None
        if event.get("event") == "backed-up":
            entries[event["id"]] = {
                "file": event["file"],
                "sent": event["sending_sha256"],
                "status": "backed-up",
            }
        elif event.get("event") == "written" and event.get("id") in entries:
            entries[event["id"]]["status"] = "written"
    return list(entries.values())


def _live(stored: dict[str, Any]) -> LiveObject:
    if "view" in stored:
        return LiveObject.of_view(
            View.from_node(stored["view"], stored["entity"], stored["project"])
        )
    return LiveObject.of_trigger(stored["trigger"], stored["entity"], stored["project"])
