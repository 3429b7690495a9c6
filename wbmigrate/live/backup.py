"""Backups of an apply run: the original of every object, saved before it is written.

A folder (mode 0700) holds one file per object (mode 0600), `manifest.json` and `journal.jsonl`,
a line per event: backed up (with the digest of what is about to be sent, so a run killed
mid-write is still undone), written, not written after all, or saved by someone else right after
the write (their version kept beside the original). Nothing is trusted when read back: journal
lines carry checksums chained from the manifest, each file's SHA-256 is journaled, the line count
goes into the manifest at the end, and each file must hold the object and project named; a
backup failing any check is refused whole, before anything is restored.

What is made durable when (so a crash, even of the machine, never leaves a write without its
undo): each file is synced as it is written (`safe_write`); journal lines are appended as
events happen, and `sync` makes them durable in one go, after the folder itself (so the files
just written keep their names). Apply calls `sync` after backing up a batch of objects and
before sending any of their writes: one fsync per file, one of the folder and one of the
journal per batch, not one per line.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from wbmigrate import __version__
from wbmigrate.errors import WbmigrateError
from wbmigrate.live.objects import LiveObject
from wbmigrate.live.triggers import trigger_input
from wbmigrate.redact import redact
from wbmigrate.safe_write import PRIVATE_MODE, write_text

FORMAT = "wbmigrate-backup/3"  # /3: checksums; /2 kept no checksums; /1 no journal
FORMATS = ("wbmigrate-backup/1", "wbmigrate-backup/2", FORMAT)
MANIFEST = "manifest.json"
JOURNAL = "journal.jsonl"
SET_FORMAT = "wbmigrate-backup-set/1"  # a run over several projects: a backup per project
MEMBER = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}\.json")  # a file the journal may name


class BackupError(WbmigrateError):
    """A backup folder that cannot be written or read, or that fails a check."""


def digest(obj: LiveObject, text: str | None = None) -> str:
    """What identifies the state of an object: its spec, or a trigger's writable fields."""
    text = obj.text if text is None else text
    if obj.view is None:
        text = json.dumps(trigger_input(json.loads(text)), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def safe_name(text: str) -> str:
    """A file-name part from any text: no separators, no dots in front, bounded length."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "_", text).lstrip(".")[:80]
    return cleaned or "_"


def short_hash(text: str) -> str:
    """Ten hex digits of the SHA-256 of the exact text: what keeps names that clean to the same
    stem (`id+1`, `id/1`) or that differ only in case apart."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]


def file_stem(kind: str, object_id: str) -> str:
    """`report-<readable id>-<hash of the id>`: unique per id, and far below any file-name
    limit whatever the id's length."""
    return f"{kind}-{safe_name(object_id)[:48]}-{short_hash(object_id)}"


def canonical(data: Any) -> str:
    """The one text of a JSON value that checksums are taken of."""
    return json.dumps(data, sort_keys=True, ensure_ascii=True, separators=(",", ":"))


def chained(previous: str, event: dict[str, Any]) -> str:
    """The checksum of a journal line: its canonical JSON chained to the line before, so an
    edited, reordered or deleted line breaks every checksum after it."""
    return hashlib.sha256(f"{previous}\n{canonical(event)}".encode()).hexdigest()


def genesis(manifest: dict[str, Any]) -> str:
    """What the first journal line chains to: the manifest as the run began."""
    started = {key: value for key, value in manifest.items() if key != "journal"}
    return hashlib.sha256(canonical(started).encode()).hexdigest()


def check_folder(path: Path) -> None:
    """Refuse in one line a backup folder that holds files, has a file in its way, or cannot
    be made or written where it is, before anything is read or written."""
    try:
        place = next(p for p in [path, *path.absolute().parents] if p.exists())
        if place == path and path.is_dir() and any(path.iterdir()):
            raise BackupError(f"{path} exists and is not empty")
        if not place.is_dir() and place == path:
            raise BackupError(f"{path}: a file is in the way, not a folder")
        if not place.is_dir():
            raise BackupError(f"{path}: cannot make a folder under {place}, a file")
        if not os.access(place, os.W_OK | os.X_OK):
            raise BackupError(f"{path}: cannot make the backup folder ({place} is not writable)")
    except OSError as exc:
        raise BackupError(f"{path}: cannot use it as the backup folder ({exc.strerror})") from None


def private_folder(path: Path) -> None:
    """Create `path` (and parents) with mode 0700 and show it can hold files, or one line."""
    check_folder(path)
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.chmod(0o700)
        (path / ".wbmigrate-probe").touch(mode=0o600)
        (path / ".wbmigrate-probe").unlink()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise BackupError(f"{path}: cannot make the backup folder ({reason})") from None


def write_private(path: Path, data: Any) -> str:
    """Write JSON to a 0600 file, safely; the SHA-256 of the bytes on disk."""
    write_text(path, json.dumps(data, indent=2, ensure_ascii=True) + "\n", PRIVATE_MODE)
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Journal:
    """A folder (mode 0700) with `manifest.json` and `journal.jsonl`: a line appended per event,
    its checksum chained to the line before (the first to the manifest); at the end, the
    journal's length and last checksum go into the manifest, so lines deleted from its end are
    found too. Each event costs one appended line, so a run of thousands stays linear."""

    format: str  # the manifest's format: a backup's or a backup set's

    def __init__(self, folder: Path, info: dict[str, Any]) -> None:
        private_folder(folder)
        self.folder = folder
        self._lock = threading.Lock()
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        self._manifest = {"format": self.format, "wbmigrate": __version__, "created": now, **info}
        write_private(folder / MANIFEST, self._manifest)
        self._last, self._lines = genesis(self._manifest), 0
        self.end: dict[str, Any] | None = None  # the journal's length and checksum, once closed
        os.close(os.open(folder / JOURNAL, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
        self._unsynced, self._new_names = 0, True  # the manifest and journal just made

    def close(self) -> str | None:
        """The run is over: the journal's length and last checksum go into the manifest.
        Failing that, what went wrong: the backup is whole all the same, and reads as a run
        that did not finish."""
        with self._lock:
            journal = self.end = {"lines": self._lines, "checksum": self._last}
            try:
                # The journal first: a manifest counting lines a crash could still take
                # would make the whole backup refused.
                self._sync()
                write_private(self.folder / MANIFEST, {**self._manifest, "journal": journal})
            except (OSError, WbmigrateError) as exc:
                return f"{self.folder / MANIFEST}: the end of the run is not recorded ({exc})"
        return None

    def sync(self) -> None:
        """Make every file and journal line so far durable. Before a write is sent, the line
        with the digest of what it sends must be: that line is what lets `rollback` undo a
        run killed right after the write (the line is on disk before the request leaves)."""
        with self._lock:
            self._sync()

    def _sync(self) -> None:
        # The folder before the journal: a durable line must never name a file whose name
        # a crash could still take (rollback would refuse the whole backup).
        if self._new_names:
            _fsync(self.folder, os.O_RDONLY)
            self._new_names = False
        if self._unsynced:
            _fsync(self.folder / JOURNAL, os.O_WRONLY | os.O_APPEND)
            self._unsynced = 0

    def record(self, event: dict[str, Any]) -> None:
        """Append one line, durable at the next `sync` (a line cut short by a crash is the
        last one, and rollback reads the journal without it). A file `Backup.keep` wrote
        counts as backed up once its line is recorded."""
        # A title or reason is anyone's text: the key never reaches the journal either.
        event = {k: redact(v) if isinstance(v, str) else v for k, v in event.items()}
        with self._lock, (self.folder / JOURNAL).open("a", encoding="utf-8") as out:
            self._last = chained(self._last, event)
            self._lines += 1
            out.write(json.dumps({**event, "checksum": self._last}, ensure_ascii=True) + "\n")
            self._unsynced += 1


class Backup(Journal):
    """The backup folder of one apply run (of one project), written as the run goes."""

    format = FORMAT

    def keep(self, obj: LiveObject, sending: str) -> dict[str, Any]:
        """Back up the object as fetched, and what is about to be sent in its place: its file,
        written ahead of its turn, which `record` journals once it has come (followed by `sync`
        before the write is sent), or `discard` removes if it never does."""
        event = self._file("backed-up", obj, obj)
        return {**event, "title": obj.title, "sending_sha256": digest(obj, sending)}

    def discard(self, kept: dict[str, Any]) -> None:
        """Remove a file kept for a write that will not be made (a run stopped first): the
        journal never named it, so rollback would never read it either (nor one left behind
        when it cannot be removed)."""
        with contextlib.suppress(OSError):
            (self.folder / kept["file"]).unlink(missing_ok=True)

    def written(self, obj: LiveObject) -> None:
        """Record that the new state was written and read back."""
        self.record({"event": "written", "id": obj.id})

    def not_written(self, obj: LiveObject, reason: str) -> None:
        """Record that what was backed up was not sent after all: rollback leaves it alone."""
        self.record({"event": "not-written", "id": obj.id, "reason": reason})

    def conflict(self, obj: LiveObject, theirs: LiveObject) -> None:
        """Someone else saved the object while it was written: keep their version, as read
        back, beside the original."""
        event = self._file("conflict", obj, theirs, ".theirs")
        self.record({**event, "theirs_sha256": digest(theirs)})

    def _file(
        self, event: str, obj: LiveObject, version: LiveObject, suffix: str = ""
    ) -> dict[str, Any]:
        """Write a version of `obj` into a file of the backup (synced by `write_private`); the
        journal line that names it."""
        name = f"{file_stem(obj.kind, obj.id)}{suffix}.json"
        sha256 = write_private(self.folder / name, _original(version))
        with self._lock:
            self._new_names = True
        return {"event": event, "file": name, "kind": obj.kind, "id": obj.id, "file_sha256": sha256}


class BackupSet(Journal):
    """The backup of a run over several projects: `manifest.json` names the projects and
    their sub-folders (each a whole backup `rollback` can also take alone), and the journal
    records each project's start and end, each line durable at once."""

    format = SET_FORMAT

    def __init__(self, folder: Path, info: dict[str, Any], targets: list[str]) -> None:
        projects = {target: sub_folder(target) for target in targets}
        super().__init__(folder, {**info, "projects": projects})

    def folder_of(self, target: str) -> Path:
        return self.folder / sub_folder(target)

    def log(self, target: str, event: str, **detail: Any) -> None:
        self.record({"event": event, "target": target, **detail})
        self.sync()


def sub_folder(target: str) -> str:
    """The sub-folder of one project: readable, and unique per project whatever its name."""
    return f"{safe_name(target.replace('/', '-'))[:60]}-{short_hash(target)}"


def _fsync(path: Path, flags: int) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _original(obj: LiveObject) -> dict[str, Any]:
    body = {"view": obj.view.node()} if obj.view is not None else {"trigger": obj.trigger}
    return {"kind": obj.kind, "id": obj.id, "entity": obj.entity, "project": obj.project, **body}


def default_folder(label: str) -> Path:
    """`wbmigrate-backups/LABEL-TIME`, made unique: a fresh backup folder's default."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    name = f"{label}-{stamp}"
    folder = Path("wbmigrate-backups") / name
    for n in range(2, 1000):  # two runs within one second
        if not folder.exists():
            break
        folder = folder.with_name(f"{name}-{n}")
    return folder
