"""Write a migration to W&B object by object, and undo it.

For each object: read it again, refuse it if it changed since it was fetched (or planned),
rewrite the fresh spec, back up the original, send it with every other field as fetched, and
read it back to check W&B stores what was sent. One failing object never stops the others.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from wbmigrate.engine.model import Options
from wbmigrate.errors import WbmigrateError
from wbmigrate.guard import check_write
from wbmigrate.live.backup import Backup, Restorable, digest
from wbmigrate.live.client import Client
from wbmigrate.live.objects import (
    Fingerprint,
    LiveObject,
    ObjectRef,
    reread,
    stored_as_sent,
    write,
)
from wbmigrate.mapping import Migration
from wbmigrate.plan import signature
from wbmigrate.rewrite import rewrite_text


class WriteStatus(enum.Enum):
    APPLIED = "applied"  # written and read back
    RESTORED = "restored"  # rollback: the original written back and read back
    UNCHANGED = "unchanged"  # nothing to migrate (any more)
    SKIPPED = "skipped"  # refused: changed since it was fetched, or not safe to write
    FAILED = "failed"  # an error; this object is as it was, or restored by the next run


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


Progress = Callable[[Outcome], None]


def failed(outcomes: Iterable[Outcome]) -> bool:
    """Whether some object was not brought to its goal (skipped or failed)."""
    return any(o.status in (WriteStatus.SKIPPED, WriteStatus.FAILED) for o in outcomes)


def run_all(
    work: Iterable[Any], task: Callable[[Any], Outcome], jobs: int, progress: Progress | None = None
) -> list[Outcome]:
    """Run `task` over `work` on `jobs` threads; outcomes in the order of `work`."""
    items = list(work)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(task, item) for item in items]
        outcomes = []
        for future in futures:
            outcome = future.result()
            if progress:
                progress(outcome)
            outcomes.append(outcome)
    return outcomes


def apply_one(
    client: Client,
    obj: LiveObject,
    expected: Expected,
    migration: Migration,
    options: Options,
    backup: Backup,
) -> Outcome:
    try:
        now = reread(client, obj)
        if now is None:
            return Outcome(obj.ref, WriteStatus.FAILED, "no longer exists")
        if now.fingerprint != expected.fingerprint:
            since = "the saved plan" if expected.changes is not None else "it was read"
            return Outcome(obj.ref, WriteStatus.SKIPPED, f"changed since {since}; plan again")
        result, new_text = rewrite_text(
            now.text, migration, kind=now.kind, name=now.title, options=options
        )
        if not result.changed:
            return Outcome(obj.ref, WriteStatus.UNCHANGED)
        if expected.changes is not None and signature(result.changes) != expected.changes:
            return Outcome(obj.ref, WriteStatus.SKIPPED, "the changes differ from the saved plan")
        check_write(result.original, list(result.edits), new_text)
        backup.save(now, new_text)
        write(client, now, new_text)
        if not stored_as_sent(now, reread(client, now), new_text):
            return Outcome(
                obj.ref, WriteStatus.FAILED, "W&B does not store what was sent; see the backup"
            )
        backup.written(now)
        return Outcome(obj.ref, WriteStatus.APPLIED, changes=len(result.changes))
    except (WbmigrateError, OSError) as exc:
        return Outcome(obj.ref, WriteStatus.FAILED, _one_line(exc))


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
            return Outcome(
                original.ref,
                WriteStatus.SKIPPED,
                "changed after the migration; --force overwrites that change",
            )
        write(client, original, original.text)
        if not stored_as_sent(original, reread(client, original), original.text):
            return Outcome(original.ref, WriteStatus.FAILED, "W&B does not store the original")
        return Outcome(original.ref, WriteStatus.RESTORED)
    except (WbmigrateError, OSError) as exc:
        return Outcome(original.ref, WriteStatus.FAILED, _one_line(exc))


def _one_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
