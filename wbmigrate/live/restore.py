"""Reading a backup folder back for `rollback`: every file, journal line and object checked
against the manifest, and a set's every sub-backup against the set, before anything is
restored (a damaged or foreign backup is refused); then each object put back (`restore_one`).
The checksums catch damage, not forgery: they are not keyed, so whoever can write the folder
can recompute them."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wbmigrate.errors import WbmigrateError
from wbmigrate.live import backup
from wbmigrate.live.backup import FORMAT, JOURNAL, MANIFEST, SET_FORMAT, BackupError, digest
from wbmigrate.live.client import Client, View
from wbmigrate.live.objects import LiveObject, reread, write
from wbmigrate.live.outcomes import MESSAGES, Outcome, WriteStatus, one_line, verdict
from wbmigrate.live.project import NAME
from wbmigrate.safe_write import read_file

TARGET = re.compile(f"{NAME}/{NAME}")  # ENTITY/PROJECT, as a backup names its project
BOUNDS = ("started", "ended")  # a set's journal events that say where a project's ended


@dataclass(frozen=True)
class Restorable:
    """One backed-up object: the original, the digest of what was sent (None: nothing), whether
    the write was confirmed, and the digest of a version someone else saved meanwhile."""

    original: LiveObject
    sent_sha256: str | None
    confirmed: bool = False
    theirs_sha256: str | None = None


@dataclass(frozen=True)
class Loaded:
    """A checked backup: manifest, objects, and notes (an unverified format, an unended run)."""

    manifest: dict[str, Any]
    items: list[Restorable]
    notes: tuple[str, ...] = ()


def load_backup(folder: Path) -> Loaded:
    """The manifest and the objects of a backup folder, every check passed."""
    manifest = _manifest(folder)
    checked = manifest["format"] == FORMAT
    notes = () if checked else (f"{manifest['format']} keeps no checksums: unverified",)
    if checked and "journal" not in manifest:
        notes = ("the apply run did not finish; restoring what its journal records",)
    try:
        target = manifest.get("target")
        objects = [_restorable(folder, e, target, checked) for e in _entries(folder, manifest)]
    except (KeyError, TypeError, AttributeError) as exc:  # well-formed JSON, wrong shape
        raise BackupError(f"{folder}: a damaged backup ({type(exc).__name__}: {exc})") from None
    # Objects were backed up as concurrent writes finished; restore them in a stable order.
    order = {"report": 0, "workspace": 1, "automation": 2}
    objects.sort(key=lambda r: (order[r.original.kind], r.original.is_draft, r.original.title))
    return Loaded(manifest, objects, notes)


def _manifest(folder: Path) -> dict[str, Any]:
    if not folder.is_dir():
        raise BackupError(f"{folder}: {'not a folder' if folder.exists() else 'no such folder'}")
    if not any(folder.iterdir()):
        raise BackupError(f"{folder}: an empty folder, not a wbmigrate backup")
    try:
        manifest = json.loads(read_file(folder / MANIFEST)[0])
    except OSError as exc:
        reason = f"no {MANIFEST}" if isinstance(exc, FileNotFoundError) else exc.strerror
        raise BackupError(f"{folder}: not a wbmigrate backup folder ({reason})") from None
    except (ValueError, RecursionError):
        raise BackupError(f"{folder}: not a wbmigrate backup ({MANIFEST} is not JSON)") from None
    if not isinstance(manifest, dict) or manifest.get("format") not in backup.FORMATS:
        raise BackupError(f"{folder}: not a wbmigrate backup folder (unknown format)")
    # Both are printed (a /2 backup is unchecked): no text that could forge a line.
    target, host = manifest.get("target", "-/-"), manifest.get("base_url", "")
    if not (TARGET.fullmatch(str(target)) and str(host).isprintable()):
        raise BackupError(f"{folder}: not a wbmigrate backup (a damaged project or host)")
    if not isinstance(manifest.get("journal", {}), dict):
        raise BackupError(f"{folder / MANIFEST}: a damaged journal record")
    return manifest


def _entries(folder: Path, manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """Each backed-up object: its file, what was sent, whether the write was confirmed, and
    someone else's version if they saved it meanwhile."""
    if "objects" in manifest:  # format /1
        return [{**e, "sent": e.get("written_sha256")} for e in manifest["objects"]]
    entries: dict[str, dict[str, Any]] = {}
    for event in _journal(folder / JOURNAL, manifest):
        entry = entries.get(event["id"])
        if event["event"] == "backed-up" and entry is None:
            entries[event["id"]] = {**event, "sent": event["sending_sha256"]}
        elif entry is not None and event["event"] in ("written", "not-written"):
            entry["status"] = event["event"]
            entry["sent"] = None if event["event"] == "not-written" else entry["sent"]
        elif entry is not None and event["event"] == "conflict":
            entry["theirs"] = event
    return list(entries.values())


class JournalError(BackupError):
    """A journal that is not what its run wrote; `briefly`: as a backup set says it of its own."""

    def __init__(self, message: str, briefly: str = "") -> None:
        super().__init__(message)
        self.briefly = briefly or message


def _journal(path: Path, manifest: dict[str, Any], key: str = "id") -> list[dict[str, Any]]:
    """The events of a journal (a backup's, each of an object `id`; a set's, of a `target`);
    with checksums, each verified against the line before, and the whole against the length
    and last checksum the manifest got when the run ended."""
    finished, checked = manifest.get("journal"), manifest["format"] in (FORMAT, SET_FORMAT)
    try:
        lines = read_file(path)[0].splitlines()
    except OSError as exc:
        raise JournalError(f"{path}: cannot read it ({exc.strerror})") from None
    events, previous = [], backup.genesis(manifest)
    for number, line in enumerate(lines, start=1):
        try:
            event = json.loads(line)  # bytes: a line cut inside a character is a ValueError
        except (ValueError, RecursionError):
            if number == len(lines) and not finished:
                break  # a line cut short by a crash: the write it announces never started
            raise JournalError(f"{path}:{number}: not a journal line") from None
        if not isinstance(event, dict) or not isinstance(event.get(key), str):
            raise JournalError(f"{path}:{number}: not a journal line")
        if not checked and "checksum" in event:  # a /3 backup relabelled: never unchecked
            said = f"{MANIFEST} says {manifest['format']}, which keeps none"
            raise JournalError(f"{path}:{number}: checksummed, but {said}")
        if checked:
            given, previous = event.pop("checksum", None), backup.chained(previous, event)
            if given != previous:
                mismatch = f"{path}:{number}: checksum mismatch (lines edited or deleted)"
                raise JournalError(mismatch, f"journal line {number} was changed")
        events.append(event)
    wrote = (finished or {}).get("lines"), (finished or {}).get("checksum")
    if checked and finished and wrote != (len(events), previous):
        cut = f"{path}: {len(events)} lines, but the run wrote {wrote[0]}"
        raise JournalError(cut, "journal lines were removed from its end")
    return events


def _restorable(
    folder: Path, entry: dict[str, Any], target: str | None, checked: bool
) -> Restorable:
    original = _stored(folder, entry, entry.get("file_sha256"), target, checked)
    theirs = entry.get("theirs")
    if theirs is not None:
        _stored(folder, {**entry, "file": theirs["file"]}, theirs["file_sha256"], target, checked)
    confirmed = entry.get("status") == "written"
    return Restorable(original, entry["sent"], confirmed, theirs and theirs["theirs_sha256"])


def _stored(
    folder: Path, entry: dict[str, Any], sha256: str | None, target: str | None, checked: bool
) -> LiveObject:
    """The object a backup file holds, once the file is shown to be the one the journal
    names, of the object and project it names."""
    name = entry.get("file")
    if not isinstance(name, str) or not backup.MEMBER.fullmatch(name):
        raise BackupError(f"{folder / JOURNAL}: names a file that cannot be a backup: {name!r}")
    try:
        data = read_file(folder / name)[0]
    except FileNotFoundError:
        raise BackupError(f"{folder / name}: missing from the backup") from None
    except OSError as exc:
        raise BackupError(f"{folder / name}: cannot read it ({exc.strerror})") from None
    try:
        obj = _live(json.loads(data))
    except (ValueError, RecursionError, KeyError, TypeError, AttributeError):
        raise BackupError(f"{folder / name}: not a backup of one object") from None
    where = f"{obj.entity}/{obj.project}"
    if target is not None and where != target:
        raise BackupError(f"{folder / name}: an object of {where}, but the backup is of {target}")
    if (obj.id, obj.kind) != (entry.get("id", obj.id), entry.get("kind", obj.kind)):
        raise BackupError(f"{folder / name}: holds {obj.kind} {obj.id}, not the one journaled")
    if checked and hashlib.sha256(data).hexdigest() != sha256:
        raise BackupError(f"{folder / name}: changed since it was backed up (checksum mismatch)")
    return obj


def _live(stored: dict[str, Any]) -> LiveObject:
    entity, project = stored["entity"], stored["project"]
    if not all(isinstance(name, str) and re.fullmatch(NAME, name) for name in (entity, project)):
        raise TypeError("entity and project are names")  # never a line break to print
    if "view" in stored:
        obj = LiveObject.of_view(View.from_node(stored["view"], entity, project))
    else:
        obj = LiveObject.of_trigger(stored["trigger"], entity, project)
    if (obj.id, obj.kind) != (stored["id"], stored["kind"]):
        raise KeyError("id")
    return obj


def restore_one(client: Client, item: Restorable, force: bool) -> Outcome:
    """Put one object back to its backed-up original."""
    original = item.original
    if item.sent_sha256 is None:
        return Outcome(original.ref, WriteStatus.UNCHANGED, "was not written by that run")
    try:
        now = reread(client, original)
        if now is None:
            return Outcome(original.ref, WriteStatus.FAILED, "no longer exists")
        if digest(now) == digest(original):
            return Outcome(original.ref, WriteStatus.UNCHANGED, "already as it was")
        if digest(now) != item.sent_sha256 and not force:
            return Outcome(original.ref, WriteStatus.SKIPPED, _edited_since(item, now))
        saved_at = write(client, original, original.text)
        back = reread(client, original)
        status = verdict(now, original.text, saved_at, back)
        if status is WriteStatus.APPLIED:
            return Outcome(original.ref, WriteStatus.RESTORED)
        message = "deleted right after the write" if back is None else MESSAGES["rollback", status]
        return Outcome(original.ref, status, message)
    except (WbmigrateError, OSError) as exc:
        return Outcome(original.ref, WriteStatus.FAILED, one_line(exc))


def _edited_since(item: Restorable, now: LiveObject) -> str:
    if item.theirs_sha256 == digest(now):
        return (
            "saved by someone else during the migration (their version is in the backup); "
            "--force restores the original over it"
        )
    return "changed after the migration; --force overwrites that change"


# --- a backup set: the backups of a run over several projects -----------------------------


@dataclass(frozen=True)
class Restoring:
    """The backups of a folder (of `rollback`, or verify's baseline): its manifest, its
    backups by project (every check passed), and whether it is a backup set (reported project
    by project)."""

    manifest: dict[str, Any]
    backups: dict[str, Loaded]
    is_set: bool = True


def is_backup_set(folder: Path) -> bool:
    try:
        data = json.loads(read_file(folder / MANIFEST)[0].decode())
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and data.get("format") == SET_FORMAT


def load_backup_set(folder: Path, only: Iterable[str] = ()) -> Restoring:
    """The projects of a backup set (those in `only`, when given), once the whole set is shown
    to be what its run wrote: every sub-backup its journal says was started is there, whole,
    and of the set's host and its own project. Else a BackupError, a line per problem."""
    try:
        manifest = json.loads(read_file(folder / MANIFEST)[0].decode())
        if manifest.get("format") != SET_FORMAT:  # read again since `is_backup_set`: its journal
            raise ValueError(f"its manifest is no longer {SET_FORMAT}")  # is checksummed, always
        listed = manifest["projects"]
        folders = {_target(t): folder / _member(t, name) for t, name in dict(listed).items()}
        events = _journal(folder / JOURNAL, manifest, "target")
        # the projects the run started, each with where its sub-backup's journal ended
        started = {e["target"]: e.get("journal") for e in events if e["event"] in BOUNDS}
    except JournalError as exc:
        raise BackupError(f"{folder}: a damaged backup set ({exc.briefly})") from None
    except (OSError, ValueError, RecursionError, KeyError, TypeError, AttributeError) as exc:
        raise BackupError(f"{folder}: a damaged backup set ({exc})") from None
    wanted = list(only)
    unknown = [t for t in wanted if t not in folders]
    if unknown:
        raise BackupError(
            f"{folder}: holds no backup of {', '.join(unknown)} "
            f"(it holds {', '.join(folders) or 'none'})"
        )
    backups, problems = {}, []
    for target, sub in folders.items():  # every project, whichever are chosen: the set whole
        try:
            backups[target] = _sub_backup(manifest, target, sub, started)
        except BackupError as exc:
            problems.append(str(exc))
    if problems:
        raise BackupError("\n".join(problems))
    return Restoring(manifest, {t: b for t, b in backups.items() if not wanted or t in wanted})


def _target(target: Any) -> str:
    """`ENTITY/PROJECT`, or a ValueError: a name that could forge a line is never shown."""
    if not isinstance(target, str) or not TARGET.fullmatch(target):
        raise ValueError(f"{target!r} is not a project")
    return target


def _member(target: str, name: Any) -> str:
    """The sub-folder of `target`, if the manifest names that one (any other is not ours)."""
    if name != backup.sub_folder(target):
        raise ValueError(f"{name!r} is not the sub-folder of {target}")
    return backup.sub_folder(target)


def _sub_backup(
    manifest: dict[str, Any], target: str, sub: Path, started: dict[str, Any]
) -> Loaded:
    """The backup of one project of a set, checked whole and against the set: it ends where
    the set's journal says it ended (lines cut from its end, and its own record of them, would
    otherwise read as a run that did not finish). A project the run never started (it stopped
    first) may have none: nothing was written to it."""
    if not sub.exists():
        if target in started:
            raise BackupError(f"{sub}: missing, but the set's journal says {target} was started")
        return Loaded({}, [], ("the run stopped before this project; nothing was written to it",))
    loaded = load_backup(sub)
    made = loaded.manifest
    if made["format"] != FORMAT:  # a set's backups always kept checksums
        raise BackupError(f"{sub}: a {made['format']} backup; a set's backups keep checksums")
    if made.get("target") != target:
        raise BackupError(f"{sub}: the backup of {made.get('target')!r}, not of {target}")
    if made.get("base_url") != manifest.get("base_url"):
        raise BackupError(
            f"{sub}: made on {made.get('base_url')!r}, but the set on {manifest.get('base_url')!r}"
        )
    end = started.get(target)
    if end is not None and made.get("journal") != end:
        raise BackupError(f"{sub}: its journal does not end where the set's journal says it did")
    return loaded


def load_backups(folder: Path, only: Iterable[str] = ()) -> Restoring:
    """One backup, or the backups of a set (those of the projects in `only`, when given)."""
    if not is_backup_set(folder):
        loaded = load_backup(folder)
        return Restoring(loaded.manifest, {str(loaded.manifest.get("target")): loaded}, False)
    return load_backup_set(folder, only)
