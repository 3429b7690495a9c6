"""Write a migration to W&B object by object, and undo it.

For each object: refuse it if it changed since it was planned, rewrite its spec, back up the
original, then read it again and send the new spec at once if it is still exactly what was
planned (W&B's `upsertView` and `updateFilterTrigger` take no precondition, so this re-read is
the last moment an edit can be seen before it would be overwritten; nothing is done between it
and the write). Then read it back: if someone else saved it meanwhile, it is a conflict, and
their version is kept in the backup beside the original. One failing object never stops the
others; a Ctrl-C stops the batch but lets the writes in flight finish.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from wbmigrate.engine.model import Options
from wbmigrate.errors import WbmigrateError
from wbmigrate.guard import check_write
from wbmigrate.live.backup import Backup, digest
from wbmigrate.live.client import Client
from wbmigrate.live.objects import (
    Fingerprint,
    LiveObject,
    ObjectRef,
    reread,
    stored_as_sent,
    write,
)
from wbmigrate.live.restore import Restorable
from wbmigrate.mapping import Migration
from wbmigrate.plan import signature
from wbmigrate.rewrite import rewrite_text


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


def run_all(
    work: Iterable[Any],
    task: Callable[[Any], Outcome],
    jobs: int,
    progress: Progress | None = None,
    stopping: Callable[[], None] | None = None,
) -> Batch:
    """Run `task` over `work` on `jobs` threads; outcomes in the order of `work`. A Ctrl-C
    cancels what has not started and waits for what has (`stopping` is called first), so
    every write that was sent ends with its backup and journal lines."""
    items = list(work)
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    futures = [pool.submit(task, item) for item in items]
    outcomes = []
    try:
        for future in futures:
            outcome = future.result()
            if progress:
                progress(outcome)
            outcomes.append(outcome)
    except KeyboardInterrupt:
        if stopping:
            stopping()
        _drain(pool)
        started = [f for f in futures if not f.cancelled()]
        return Batch([f.result() for f in started], True, len(futures) - len(started))
    pool.shutdown()
    return Batch(outcomes)


def _drain(pool: ThreadPoolExecutor) -> None:
    """Cancel the objects not started and wait for those in flight, even through another
    Ctrl-C: a write cut off here would have no outcome to report."""
    while True:
        try:
            pool.shutdown(wait=True, cancel_futures=True)
            return
        except KeyboardInterrupt:
            continue


def apply_one(
    client: Client,
    obj: LiveObject,
    expected: Expected,
    migration: Migration,
    options: Options,
    backup: Backup,
) -> Outcome:
    """Migrate one object: what was planned, backed up first, written only if W&B still holds
    exactly what was planned, and read back."""
    since = "the saved plan" if expected.changes is not None else "it was read"
    try:
        if obj.fingerprint != expected.fingerprint:
            return Outcome(obj.ref, WriteStatus.SKIPPED, f"changed since {since}; plan again")
        result, new_text = rewrite_text(
            obj.text, migration, kind=obj.kind, name=obj.title, options=options
        )
        if not result.changed:
            return Outcome(obj.ref, WriteStatus.UNCHANGED)
        if expected.changes is not None and signature(result.changes) != expected.changes:
            return Outcome(obj.ref, WriteStatus.SKIPPED, "the changes differ from the saved plan")
        check_write(result.original, list(result.edits), new_text)
        backup.save(obj, new_text)
        outcome = _write_backed_up(client, obj, new_text, backup, since)
        return Outcome(obj.ref, outcome.status, outcome.message, len(result.changes))
    except (WbmigrateError, OSError) as exc:
        return Outcome(obj.ref, WriteStatus.FAILED, _one_line(exc))


def _write_backed_up(
    client: Client, obj: LiveObject, new_text: str, backup: Backup, since: str
) -> Outcome:
    """Re-read, write at once if unchanged, read back; every end is journaled."""
    try:
        latest = reread(client, obj)
    except (WbmigrateError, OSError):
        backup.not_written(obj, "could not be read again")
        raise
    if latest is None or latest.fingerprint != obj.fingerprint:
        backup.not_written(obj, "gone" if latest is None else "changed")
        if latest is None:
            return Outcome(obj.ref, WriteStatus.FAILED, "no longer exists")
        return Outcome(obj.ref, WriteStatus.SKIPPED, f"changed since {since}; plan again")
    echo = write(client, latest, new_text)
    back = reread(client, latest)
    status = verdict(latest, new_text, echo, back)
    if status is WriteStatus.APPLIED:
        backup.written(obj)
        return Outcome(obj.ref, status)
    if back is None:
        return Outcome(obj.ref, status, GONE)
    if status is WriteStatus.CONFLICT:
        backup.conflict(obj, back)
    return Outcome(obj.ref, status, MESSAGES["apply", status])


def verdict(
    before: LiveObject, sent: str, echo: LiveObject, back: LiveObject | None
) -> WriteStatus:
    """What a write came to, from the object just before it, what was sent, the mutation's
    answer and the read-back. `updatedAt` moving after the answer shows another writer even
    when they saved the same spec; a read-back that is neither what was sent nor what was
    there shows one whatever the clock says."""
    if back is None:
        return WriteStatus.FAILED
    moved = back.updated_at != echo.updated_at
    if stored_as_sent(before, back, sent) and not moved:
        return WriteStatus.APPLIED
    if digest(back) == digest(before) and not moved:
        return WriteStatus.FAILED
    return WriteStatus.CONFLICT


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
        echo = write(client, original, original.text)
        back = reread(client, original)
        status = verdict(now, original.text, echo, back)
        if status is WriteStatus.APPLIED:
            return Outcome(original.ref, WriteStatus.RESTORED)
        message = "deleted right after the write" if back is None else MESSAGES["rollback", status]
        return Outcome(original.ref, status, message)
    except (WbmigrateError, OSError) as exc:
        return Outcome(original.ref, WriteStatus.FAILED, _one_line(exc))


def _edited_since(item: Restorable, now: LiveObject) -> str:
    if item.theirs_sha256 == digest(now):
        return (
            "saved by someone else during the migration (their version is in the backup); "
            "--force restores the original over it"
        )
    return "changed after the migration; --force overwrites that change"


def _one_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
