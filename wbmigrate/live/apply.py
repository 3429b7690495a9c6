"""Write a migration to W&B, a batch of objects at a time, and undo it.

Each object was planned once, when it was read (`plan_write`): the write reuses that rewrite,
and goes ahead only if W&B still holds exactly
the bytes it was made from. For each batch (as many objects as are written at once, `--jobs`): back
up the originals (their files are written while the batch before waits; the journal names them just
before the read), read the batch again in one request (views by id under GraphQL aliases, the
automations by name), make the backup durable while that read is out, and send together the
writes of the objects still exactly as planned. W&B's `upsertView` and `updateFilterTrigger` take no
precondition, so that read is the last moment an edit can be seen before it would be overwritten. It
goes out once the writes of the batch two before are answered, and the writes leave once it and the
batch before's writes are answered: between an object's last read and its write lies at most the
batch before's writes, never more than `--jobs` writes are in flight, and a read costs the run no
turn of its own. Then each object is read back: if someone else saved it meanwhile, it is a
conflict, and their version is kept in the backup beside the original. The mutation is asked back
only the time of the save (`updatedAt`): its answer cannot show a save made after it, so the
read-back stays, and it is what shows the bytes W&B stored; it rides on the read of the batch after
next (the last two batches' are one request of their own). With `--jobs 1` nothing is batched or
overlapped: each object is read, written at once and read back on its own. Batches are never larger
than `--jobs`: the writes of a batch all leave together, so a larger batch would write more at once
than asked. One failing object never stops the others; a Ctrl-C starts no new batch but lets those
in flight finish (the one being written, and the next once backed up), read-backs included. The
batches are `live.batches`; what a write came to is `live.outcomes`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from wbmigrate.engine.model import Options, Rewrite
from wbmigrate.errors import WbmigrateError, bug
from wbmigrate.live.backup import digest
from wbmigrate.live.batches import apply_all
from wbmigrate.live.client import Client
from wbmigrate.live.objects import LiveObject, reread, write
from wbmigrate.live.outcomes import (
    GONE,
    MESSAGES,
    Batch,
    Expected,
    Job,
    Outcome,
    Progress,
    Rewritten,
    WriteStatus,
    failed,
    one_line,
    verdict,
)
from wbmigrate.live.restore import Restorable
from wbmigrate.plan import Planned
from wbmigrate.rewrite import NewText, rewrite_of

if TYPE_CHECKING:
    from wbmigrate.mapping import Migration

__all__ = [
    "GONE",
    "MESSAGES",
    "Batch",
    "Expected",
    "Job",
    "Outcome",
    "Progress",
    "Rewritten",
    "WriteStatus",
    "apply_all",
    "failed",
    "plan_write",
    "restore_one",
    "run_all",
    "verdict",
]


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


# --- planning, once ----------------------------------------------------------------------------


def plan_write(
    obj: LiveObject, migration: Migration, options: Options
) -> tuple[Planned, Rewritten | None]:
    """Plan one object as `apply` writes it: the plan (for the summary) and, when one could be
    made, its rewrite: the changes, and the edits the text to send is spliced from when the
    object's turn to be written comes (`Rewritten.text`). The data-loss guard checks those
    exact bytes against the edits then (`live.outcomes.to_send`): the bytes are only sent if
    W&B still holds what they were made from."""
    source = obj.source()
    if source.error is not None:
        return Planned(source, error=source.error), None
    try:
        result = rewrite_of(obj.text, migration, kind=obj.kind, name=obj.title, options=options)
    except WbmigrateError as exc:
        return Planned(source, error=str(exc)), None
    except Exception as exc:  # a bug: said for this object alone, as `plan_one` does
        return Planned(source, error=bug(exc)), None
    return Planned(source, result), _kept(result, NewText(obj.text, result.edits))


def _kept(result: Rewrite, text: NewText) -> Rewritten:
    """A plan's rewrite as the write will use it: nothing to send, or the text, with the
    changes and the edits the guard checks it against."""
    if not result.changed:
        return Rewritten(None)
    return Rewritten(text, result.changes, result.edits)


# --- rollback ----------------------------------------------------------------------------------


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
