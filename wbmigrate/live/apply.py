"""Write a migration to W&B, a batch of objects at a time, and undo it.

Each object was planned once, when it was read (`plan_write`): the write reuses that rewrite,
and goes ahead only if W&B still holds exactly the bytes it was made from. For each batch (as
many objects as are written at once, `--jobs`): back up the originals and make the backup
durable, then read the batch again in one request (views by id under GraphQL aliases, the
automations from one listing) and send at once the writes of the objects still exactly as
planned. W&B's `upsertView` and `updateFilterTrigger` take no precondition, so that read is
the last moment an edit can be seen before it would be overwritten: nothing is done between its
answer and the writes, all sent together. Then each object is read back: if someone else saved
it meanwhile, it is a conflict, and their version is kept in the backup beside the original.
The mutation's own answer cannot show a save made after it, so the read-back stays; it rides
on the next batch's read (the last batch's is a request of its own). With `--jobs 1` nothing is
batched: each object is read, written and read back on its own. Batches are never larger than
`--jobs`: the writes of a batch all leave as its read is answered, so a larger batch would
either write more at once than asked or leave time for an edit between its read and its write.
One failing object never stops the others; a Ctrl-C starts no new batch but lets the one in
flight finish, read-back included.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from queue import Empty, Queue
from typing import Any

from wbmigrate.engine.model import Change, Options, Rewrite
from wbmigrate.errors import WbmigrateError
from wbmigrate.guard import check_write
from wbmigrate.live.backup import Backup, digest
from wbmigrate.live.client import Client
from wbmigrate.live.objects import (
    BATCH,
    Fingerprint,
    Fresh,
    LiveObject,
    ObjectRef,
    Reader,
    reread,
    stored_as_sent,
    write,
)
from wbmigrate.live.restore import Restorable
from wbmigrate.mapping import Migration
from wbmigrate.plan import Planned, signature
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


# --- planning, once ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Rewritten:
    """What apply's plan made of an object, kept beside the work item so its write reuses it
    (the write goes ahead only if W&B still holds the bytes it was made from): the text to
    send (None: nothing to change), the changes, and why the data-loss guard refuses it."""

    text: str | None
    changes: tuple[Change, ...] = ()
    refused: str | None = None


@dataclass(frozen=True)
class Job:
    """One object to write: as read when it was planned, what it must still be, its plan,
    and the backup it goes into."""

    obj: LiveObject
    expected: Expected
    plan: Rewritten
    backup: Backup


def plan_write(
    obj: LiveObject, migration: Migration, options: Options
) -> tuple[Planned, Rewritten | None]:
    """Plan one object as `apply` writes it: the plan (for the summary) and, when one could be
    made, the rewrite to send. The data-loss guard runs here, on exactly the bytes a write
    would send (they are only sent if W&B still holds what they were made from)."""
    source = obj.source()
    if source.error is not None:
        return Planned(source, error=source.error), None
    try:
        result, text = rewrite_text(
            obj.text, migration, kind=obj.kind, name=obj.title, options=options
        )
    except WbmigrateError as exc:
        return Planned(source, error=str(exc)), None
    except Exception as exc:  # a bug: said for this object alone, as `plan_one` does
        why = f"wbmigrate failed on it ({type(exc).__name__}); please report it"
        return Planned(source, error=why), None
    if not result.changed:
        return Planned(source, result), Rewritten(None)
    return Planned(source, result), Rewritten(text, result.changes, _guard(result, text))


def _guard(result: Rewrite, text: str) -> str | None:
    try:
        check_write(result.original, list(result.edits), text)
    except WbmigrateError as exc:
        return _one_line(exc)
    return None


def _to_send(job: Job) -> Outcome | str:
    """The text to send for a job, or why nothing is sent: the checks before any write, in
    their order, on the plan made when the object was read."""
    obj, expected, plan = job.obj, job.expected, job.plan
    if obj.fingerprint != expected.fingerprint:
        return Outcome(obj.ref, WriteStatus.SKIPPED, f"changed since {_since(job)}; plan again")
    if plan.text is None:
        return Outcome(obj.ref, WriteStatus.UNCHANGED)
    if expected.changes is not None and signature(plan.changes) != expected.changes:
        return Outcome(obj.ref, WriteStatus.SKIPPED, "the changes differ from the saved plan")
    if plan.refused is not None:
        return Outcome(obj.ref, WriteStatus.FAILED, plan.refused)
    return plan.text


def _since(job: Job) -> str:
    return "the saved plan" if job.expected.changes is not None else "it was read"


# --- writing, a batch at a time -----------------------------------------------------------------


def apply_all(
    client: Client,
    work: Sequence[Job],
    jobs: int,
    progress: Progress | None = None,
    stopping: Callable[[], None] | None = None,
    note: Callable[[str], None] | None = None,
) -> Batch:
    """Write `work` in batches of `jobs` objects (see the module's docstring); outcomes in the
    order of `work`. The batches run on a thread of their own, so a Ctrl-C reaches only this
    one: it starts no new batch (`stopping` is told) and waits for the one in flight, its
    read-back included, through further Ctrl-Cs. `note` hears that the server refused a
    batched read (once)."""
    size = max(1, min(jobs, BATCH))
    indexed = list(enumerate(work))
    batches = [indexed[i : i + size] for i in range(0, len(indexed), size)]
    stop = threading.Event()
    # Reads of a batch and its read-backs, when the server refuses batched reads, go one per
    # request side by side: twice the batch. The pool lives for the run: its threads keep
    # their connections.
    with ThreadPoolExecutor(max_workers=2 * size + 2) as pool:
        run = _Run(client, size, pool, note)
        driver = threading.Thread(target=run.drive, args=(batches, stop), name="wbmigrate-apply")
        driver.start()
        interrupted = _follow(driver, run.settled, progress, stopping, stop)
        driver.join()
    if run.error is not None:
        raise run.error
    outcomes = [run.outcomes[i] for i in sorted(run.outcomes)]
    return Batch(outcomes, interrupted, len(work) - len(outcomes))


def _follow(
    driver: threading.Thread,
    settled: Queue[Outcome],
    progress: Progress | None,
    stopping: Callable[[], None] | None,
    stop: threading.Event,
) -> bool:
    """Show each outcome as it is settled until the driver ends; whether a Ctrl-C came."""
    interrupted = False
    while driver.is_alive() or not settled.empty():
        try:
            outcome = settled.get(timeout=0.05)
            if progress is not None and not interrupted:
                progress(outcome)
        except Empty:
            continue
        except KeyboardInterrupt:
            if not interrupted:
                _interrupt(stop, stopping)
            interrupted = True
    return interrupted


def _interrupt(stop: threading.Event, stopping: Callable[[], None] | None) -> None:
    stop.set()
    try:
        if stopping is not None:
            stopping()
    except KeyboardInterrupt:  # a second Ctrl-C while it is said: the batch still ends well
        pass


@dataclass(frozen=True)
class _Sent:
    """A write W&B answered: the object just before it, what was sent, and the answer."""

    index: int
    job: Job
    before: LiveObject
    text: str
    echo: LiveObject


class _Run:
    """The batches of one run, on one thread: back up, make durable, read, write, and read
    back the batch before with the same read."""

    def __init__(
        self,
        client: Client,
        size: int,
        pool: ThreadPoolExecutor,
        note: Callable[[str], None] | None,
    ) -> None:
        self.client, self.size, self.pool = client, size, pool
        self.reader = Reader(client, pool, note)
        self.sent: list[_Sent] = []  # written, not yet read back
        self.outcomes: dict[int, Outcome] = {}
        self.settled: Queue[Outcome] = Queue()
        self.error: BaseException | None = None

    def drive(self, batches: list[list[tuple[int, Job]]], stop: threading.Event) -> None:
        try:
            for batch in batches:
                if stop.is_set():
                    break
                self.batch(batch)
            self.read_back()
        except BaseException as exc:  # a bug: raised in the main thread
            self.error = exc

    def batch(self, batch: list[tuple[int, Job]]) -> None:
        ready = self._back_up(batch)
        # With one object at a time nothing is batched: its read-back is its own request.
        confirming, self.sent = (self.sent, []) if self.size > 1 else ([], self.sent)
        fresh = self.reader.read([job.obj for _, job, _ in ready] + [s.job.obj for s in confirming])
        writes = self._send(ready, fresh)  # first: nothing between the read and the writes
        self._confirm(confirming, fresh)
        self.sent += self._answered(writes)
        if self.size == 1:
            self.read_back()

    def read_back(self) -> None:
        confirming, self.sent = self.sent, []
        if confirming:
            self._confirm(confirming, self.reader.read([s.job.obj for s in confirming]))

    def _done(self, index: int, outcome: Outcome) -> None:
        self.outcomes[index] = outcome
        self.settled.put(outcome)

    def _back_up(self, batch: list[tuple[int, Job]]) -> list[tuple[int, Job, str]]:
        """The batch's originals backed up side by side, then made durable together: the
        objects that may be written, with what to send."""
        ready = []
        for (index, job), done in zip(batch, self.pool.map(_backed_up, batch), strict=True):
            if isinstance(done, Outcome):
                self._done(index, done)
            else:
                ready.append((index, job, done))
        return self._durable(ready)

    def _durable(self, ready: list[tuple[int, Job, str]]) -> list[tuple[int, Job, str]]:
        """`ready` once each backup's files and journal are on disk; an object whose backup
        cannot be made durable fails, unwritten."""
        broken: dict[int, str] = {}
        for backup in {id(job.backup): job.backup for _, job, _ in ready}.values():
            try:
                backup.sync()
            except OSError as exc:
                broken[id(backup)] = f"the backup cannot be made durable ({_one_line(exc)})"
        for index, job, _ in ready:
            if id(job.backup) in broken:
                self._done(index, Outcome(job.obj.ref, WriteStatus.FAILED, broken[id(job.backup)]))
        return [(index, job, text) for index, job, text in ready if id(job.backup) not in broken]

    def _send(
        self, ready: list[tuple[int, Job, str]], fresh: Fresh
    ) -> list[tuple[int, Job, LiveObject, str, Future[LiveObject]]]:
        """Send at once the writes of the objects W&B still holds exactly as planned; the
        others are settled after, so nothing is done between the read and the writes."""
        writes, others = [], []
        for index, job, text in ready:
            now = fresh.found.get(job.obj.id)
            if now is not None and now.fingerprint == job.obj.fingerprint:
                future = self.pool.submit(write, self.client, now, text)
                writes.append((index, job, now, text, future))
            else:
                others.append((index, job, now))
        for index, job, now in others:
            self._done(index, _not_sent(job, now, fresh.failed.get(job.obj.id)))
        return writes

    def _answered(
        self, writes: list[tuple[int, Job, LiveObject, str, Future[LiveObject]]]
    ) -> list[_Sent]:
        sent = []
        for index, job, before, text, future in writes:
            try:
                sent.append(_Sent(index, job, before, text, future.result()))
            except (WbmigrateError, OSError) as exc:
                self._done(index, Outcome(job.obj.ref, WriteStatus.FAILED, _one_line(exc)))
        return sent

    def _confirm(self, confirming: list[_Sent], fresh: Fresh) -> None:
        for sent in confirming:
            error = fresh.failed.get(sent.job.obj.id)
            if error is not None:  # sent, not confirmed: the journal says what was sent
                self._done(sent.index, Outcome(sent.job.obj.ref, WriteStatus.FAILED, error))
            else:
                self._done(sent.index, _confirmed(sent, fresh.found.get(sent.job.obj.id)))


def _backed_up(item: tuple[int, Job]) -> Outcome | str:
    """Back up one object that is to be written (durable only at the batch's `sync`): what to
    send, or its outcome when nothing is."""
    job = item[1]
    try:
        text = _to_send(job)
        if isinstance(text, str):
            job.backup.save(job.obj, text)
        return text
    except (WbmigrateError, OSError) as exc:
        return Outcome(job.obj.ref, WriteStatus.FAILED, _one_line(exc))


def _not_sent(job: Job, now: LiveObject | None, error: str | None) -> Outcome:
    """An object the last read showed gone or changed (or could not show): not written,
    and journaled so, for rollback to leave it alone."""
    obj = job.obj
    try:
        if error is not None:
            job.backup.not_written(obj, "could not be read again")
            return Outcome(obj.ref, WriteStatus.FAILED, error)
        job.backup.not_written(obj, "gone" if now is None else "changed")
    except (WbmigrateError, OSError) as exc:
        return Outcome(obj.ref, WriteStatus.FAILED, _one_line(exc))
    if now is None:
        return Outcome(obj.ref, WriteStatus.FAILED, "no longer exists")
    return Outcome(obj.ref, WriteStatus.SKIPPED, f"changed since {_since(job)}; plan again")


def _confirmed(sent: _Sent, back: LiveObject | None) -> Outcome:
    """What a write came to, from its read-back; journaled."""
    obj, changes = sent.job.obj, len(sent.job.plan.changes)
    status = verdict(sent.before, sent.text, sent.echo, back)
    try:
        if status is WriteStatus.APPLIED:
            sent.job.backup.written(obj)
            return Outcome(obj.ref, status, changes=changes)
        if back is None:
            return Outcome(obj.ref, status, GONE, changes)
        if status is WriteStatus.CONFLICT:
            sent.job.backup.conflict(obj, back)
    except (WbmigrateError, OSError) as exc:
        return Outcome(obj.ref, WriteStatus.FAILED, _one_line(exc))
    return Outcome(obj.ref, status, MESSAGES["apply", status], changes)


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
