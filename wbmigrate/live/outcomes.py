"""What `apply` and `rollback` do with one object, as data: the job (the object, what it must
still be, its planned rewrite, its backup), kept on disk from its plan to its turn (`Spool`),
the checks before its write, and what the write came to. Shared by the plan (`live.prepare`) and
the batch pipeline (`live.batches`).
"""

from __future__ import annotations

import enum
import json
import os
import pickle
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from wbmigrate.edit.edits import Edit
from wbmigrate.engine.model import Change
from wbmigrate.errors import WbmigrateError
from wbmigrate.live.backup import Backup, BackupError, digest
from wbmigrate.live.objects import Fingerprint, LiveObject, ObjectRef
from wbmigrate.plan_json import signature

if TYPE_CHECKING:  # the engine loads when the first object is planned
    from wbmigrate.rewrite import NewText


class WriteStatus(enum.Enum):
    APPLIED = "applied"  # written and read back
    RESTORED = "restored"  # rollback: the original written back and read back
    UNCHANGED = "unchanged"  # nothing to migrate (any more)
    SKIPPED = "skipped"  # refused: changed since it was fetched, or not safe to write
    CONFLICT = "conflict"  # written, then saved by someone else at once: both versions kept
    FAILED = "failed"  # an error; this object is as it was, or restored by the next run


MESSAGES = {  # what each end of a write means, for apply and for rollback
    ("apply", WriteStatus.CONFLICT): "saved by someone else while it was written: W&B holds "
    "their version; it and the original are in the backup",
    ("apply", WriteStatus.FAILED): "W&B does not store what was sent; see the backup",
    ("rollback", WriteStatus.CONFLICT): "saved by someone else while it was restored: W&B "
    "holds their version",
    ("rollback", WriteStatus.FAILED): "W&B does not store the original",
}
GONE = "deleted right after the write; the original is in the backup"


@dataclass(frozen=True)
class Outcome:
    obj: ObjectRef
    status: WriteStatus
    message: str = ""
    changes: int = 0


@dataclass(frozen=True)
class Expected:
    """What an object must look like to be written: its fingerprint, and (with a saved plan)
    the exact changes."""

    fingerprint: Fingerprint
    changes: list[list[Any]] | None = None


@dataclass(frozen=True)
class Batch:
    """The outcomes of a batch, in the order of its work; after a Ctrl-C, those of the objects
    that were started, and how many were not."""

    outcomes: list[Outcome] = field(default_factory=list)
    interrupted: bool = False
    not_started: int = 0


Progress = Callable[[Outcome], None]


def failed(outcomes: Iterable[Outcome]) -> bool:
    """Whether some object was not brought to its goal (skipped, in conflict or failed)."""
    bad = (WriteStatus.SKIPPED, WriteStatus.CONFLICT, WriteStatus.FAILED)
    return any(o.status in bad for o in outcomes)


@dataclass(frozen=True)
class Rewritten:
    """What apply's plan made of an object, kept beside the work item so its write reuses it
    (the write goes ahead only if W&B still holds the bytes it was made from): its new text
    (None: nothing to change), the changes, and the edits that text was spliced from (what
    the data-loss guard checks it against)."""

    new_text: str | NewText | None
    changes: tuple[Change, ...] = ()
    edits: tuple[Edit, ...] = ()

    @cached_property
    def text(self) -> str | None:
        """The text to send, spliced when first asked for: when the object's turn to be written
        comes, with the batch before in flight, not while every write waits for the plan (at
        100 ms a request, the 500-view apply took 22.38 s so, 25.42 s spliced as planned)."""
        return None if self.new_text is None else str(self.new_text)


@dataclass(frozen=True)
class Job:
    """One object to write, at its turn: as read when it was planned, what it must still be,
    its plan, and the backup it goes into."""

    obj: LiveObject
    expected: Expected
    plan: Rewritten
    backup: Backup


class Spool:
    """The objects an apply run will write, each with its plan, on disk from when it is planned
    until its turn: the run holds no spec in memory but those of the batches in flight (a
    project's specs can be many times what a plan ever holds at once). One temporary file
    (`TMPDIR`), removed as it is made, so nothing is left behind however the run ends. Pickled:
    nothing but this process can write to it (a process of the same user that could, could as
    well write into this one's memory)."""

    def __init__(self) -> None:
        try:
            # closed once the spool is let go (`finalize`): it lives as long as the run's jobs
            self._file = tempfile.TemporaryFile(prefix="wbmigrate-")  # noqa: SIM115
        except OSError as exc:
            raise _spool_error(exc) from None
        self._lock = threading.Lock()
        weakref.finalize(self, self._file.close)

    def put(self, item: Any) -> tuple[int, int]:
        """Keep `item`; where it lies."""
        data = pickle.dumps(item, pickle.HIGHEST_PROTOCOL)
        with self._lock:
            try:
                at = self._file.seek(0, os.SEEK_END)
                self._file.write(data)
                self._file.flush()  # a full disk is said now, before anything is written
            except OSError as exc:
                raise _spool_error(exc) from None
        return at, len(data)

    def get(self, at: int, size: int) -> Any:
        with self._lock:
            try:
                self._file.seek(at)
                data = self._file.read(size)
            except OSError as exc:
                raise _spool_error(exc) from None
        return pickle.loads(data)


def _spool_error(exc: OSError) -> BackupError:
    where = tempfile.gettempdir()
    return BackupError(f"{where}: cannot keep the objects to write there ({exc.strerror})")


@dataclass(frozen=True)
class Queued:
    """An object waiting for its turn to be written: in memory, what names it and what it must
    still be; the object as read when planned, and its plan, wait in the run's `Spool` (`at`)
    until its turn. `backup`: the one it goes into, once the run has made it."""

    ref: ObjectRef
    expected: Expected
    spool: Spool
    at: tuple[int, int]
    backup: Backup | None = None

    @property
    def id(self) -> str:
        return self.ref.id

    def load(self) -> tuple[LiveObject, Rewritten]:
        obj, plan = self.spool.get(*self.at)
        return obj, plan

    def job(self) -> Job:
        """The whole job, its object and plan read back from the spool: at its turn."""
        assert self.backup is not None  # the run backs up before it writes
        obj, plan = self.load()
        return Job(obj, self.expected, plan, self.backup)


def to_send(job: Job) -> Outcome | str:
    """The text to send for a job, or why nothing is sent: the checks before any write, in
    their order, on the plan made when the object was read. The text is spliced and the
    data-loss guard run on exactly those bytes here: with the batch before in flight, so their
    time is not the run's (and the plan, which everything waits for, stays short)."""
    obj, expected, plan = job.obj, job.expected, job.plan
    if obj.fingerprint != expected.fingerprint:
        return changed(job)
    if plan.new_text is None:
        return Outcome(obj.ref, WriteStatus.UNCHANGED)
    if expected.changes is not None and signature(plan.changes) != expected.changes:
        return Outcome(obj.ref, WriteStatus.SKIPPED, "the changes differ from the saved plan")
    try:
        text = plan.text  # spliced now, with the batch before in flight
    except WbmigrateError as exc:
        return Outcome(obj.ref, WriteStatus.FAILED, one_line(exc))
    assert text is not None
    refused = guard(obj.text, plan)
    if refused is not None:
        return Outcome(obj.ref, WriteStatus.FAILED, refused)
    return text


def guard(original: str, plan: Rewritten) -> str | None:
    """Why the data-loss guard refuses to send `plan.text` in place of `original` (the text the
    plan was made from), or None. The guard loads with the engine, when first used."""
    from wbmigrate import guard as data_loss

    assert plan.text is not None
    try:
        data_loss.check_write(json.loads(original), list(plan.edits), plan.text)
    except WbmigrateError as exc:
        return one_line(exc)
    except (ValueError, RecursionError):  # the plan was made from this text: it parses
        return "data-loss guard: the original spec cannot be read again; not written"
    return None


def changed(job: Job) -> Outcome:
    """A job whose object is no longer as planned: not written."""
    since = "the saved plan" if job.expected.changes is not None else "it was read"
    return Outcome(job.obj.ref, WriteStatus.SKIPPED, f"changed since {since}; plan again")


def verdict(
    before: LiveObject, sent: str, saved_at: str | None, back: LiveObject | None
) -> WriteStatus:
    """What a write came to, from the object just before it, what was sent, the time the
    mutation's answer gave the save and the read-back. `updatedAt` moving after the answer
    shows another writer even when they saved the same spec; a read-back that is neither
    what was sent nor what was there (`digest`: a trigger's writable fields) shows one
    whatever the clock says."""
    if back is None:
        return WriteStatus.FAILED
    moved, now = back.updated_at != saved_at, digest(back)
    if now == digest(before, sent) and not moved:
        return WriteStatus.APPLIED
    if now == digest(before) and not moved:
        return WriteStatus.FAILED
    return WriteStatus.CONFLICT


def one_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
