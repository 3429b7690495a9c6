"""Write planned objects to W&B, a batch at a time (`--jobs` objects; `--jobs 1` is batches of
one, in the same pipeline), on a thread of their own under `live.run`'s Ctrl-C model.

Each object was planned once, when it was read (`live.prepare.plan_write`); its write reuses
that rewrite, and goes ahead only if W&B still holds exactly the bytes it was made from. W&B's
`upsertView` and `updateFilterTrigger` take no precondition, so a batch's read (one request:
views by id under GraphQL aliases, automations by name) is the last moment an edit can be seen.
The read of batch n+1 goes out once batch n-1's writes are answered, while batch n's read may
still be out, and carries batch n-1's read-backs (a mutation's answer cannot show a save made
after it; one someone else saved meanwhile is a conflict, their version kept in the backup);
its writes leave once that read and batch n's writes are answered: never more than `--jobs`
writes in flight (a batch's writes leave together), and no turn spent on a read alone. (At
100 ms a request, on a busy machine, the apply of the benchmark's 536 changed objects took a
median 24.2 s so, 49.1 s with each batch read once the batch before was answered.)
Meanwhile the batch after is read back from the spool (`live.outcomes.Spool`), checked (the
saved plan; its new text spliced, and the data-loss guard on those exact bytes) and backed up,
each file synced: the run holds the specs of these few batches alone. A batch is journaled as
backed up only once its read is due (its files, if the run stops first, are removed), and the
journal line is on disk before the write leaves. One failing object never stops the others.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from wbmigrate.errors import WbmigrateError, bug
from wbmigrate.live import outcomes
from wbmigrate.live.client import Client
from wbmigrate.live.objects import LiveObject, write
from wbmigrate.live.outcomes import Batch, Job, Outcome, Queued, WriteStatus, one_line
from wbmigrate.live.reader import BATCH, Fresh, Reader
from wbmigrate.live.run import Done, run


def apply_all(
    client: Client,
    work: Sequence[Queued],
    jobs: int,
    progress: outcomes.Progress | None = None,
    stopping: Callable[[], None] | None = None,
    note: Callable[[str], None] | None = None,
) -> Batch:
    """Write `work` in batches of `jobs` objects; outcomes in the order of `work`. A Ctrl-C
    starts no new batch and waits for those in flight (the one being written, and the next
    one once it is backed up), their read-backs included. `note` hears that the server refused
    a batched read (once)."""
    size = max(1, min(jobs, BATCH))
    # In flight at once: a batch's writes, the next batch's read (a task of its own) and the
    # requests of that read side by side, one per view when the server refuses batched reads
    # (that batch and the read-back of an earlier one: twice the batch). The pool lives for
    # the run: its threads keep their connections.
    with ThreadPoolExecutor(max_workers=3 * size + 2) as pool:
        return run(_Run(client, work, size, pool, note).drive, len(work), progress, stopping)


@dataclass(frozen=True)
class _Write:
    """An object that passed the checks: its place in the work, the text to send, and the
    journal line of its backup file (once written)."""

    index: int
    job: Job
    text: str
    line: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class _Turn:
    """A batch readied ahead of its turn: the objects to write, and the outcomes (by place)
    of those that will not be."""

    writes: list[_Write] = field(default_factory=list)
    settled: dict[int, Outcome] = field(default_factory=dict)

    def add(self, index: int, result: _Write | Outcome) -> None:
        if isinstance(result, Outcome):
            self.settled[index] = result
        else:
            self.writes.append(result)


@dataclass(frozen=True)
class _Writing:
    """A write sent: the object just before it, and W&B's answer (the save's time), which
    `_answered` waits for."""

    item: _Write
    before: LiveObject
    answer: Future[str | None]


class _Run:
    """The batches of one run, on one thread: back up, make durable, read (with the read-back
    of the batch two before), write once the batch before is answered."""

    def __init__(
        self,
        client: Client,
        work: Sequence[Queued],
        size: int,
        pool: ThreadPoolExecutor,
        note: Callable[[str], None] | None,
    ) -> None:
        self.client, self.work, self.size, self.pool = client, work, size, pool
        self.batches = [range(i, min(i + size, len(work))) for i in range(0, len(work), size)]
        self.reader = Reader(client, pool, note)
        self.done: Done

    def drive(self, stop: threading.Event, done: Done) -> None:
        """Batch n+1 is read once batch n-1's writes are answered, while batch n's read may
        still be out, made durable once batch n's writes have left, and written once its read
        and batch n's writes are answered. Its checks and files are done while batch n waits
        (at 100 ms a request, the 500-view apply took 25.4 s so, 31.9 s at each batch's turn)."""
        self.done = done
        ready, reading = self._read_ahead(self._keep(0), [])
        ready = self._durable(ready)
        kept = self._keep(1)
        writing: list[_Writing] = []  # batch n-1's writes, in flight
        confirming: list[_Writing] = []  # read back by batch n's read
        for n in range(len(self.batches)):
            answered = self._answered(writing)
            more = not stop.is_set() and n + 1 < len(self.batches)
            ahead = self._read_ahead(kept, answered) if more and n > 0 else None
            fresh = reading.result()
            # Between this read's answer and the writes below lies at most the wait for batch
            # n-1's writes: an edit saved in that gap is overwritten unseen, as one saved
            # between the answer and the write always could be (W&B takes no precondition).
            writing = self._send(ready, fresh)
            if more and n == 0:  # read earlier, its answer would only wait for these writes
                ahead = self._read_ahead(kept, answered)
            self._confirm(confirming, fresh)
            confirming = answered
            if ahead is None:
                _discard(kept)
                break
            ready, reading = self._durable(ahead[0]), ahead[1]
            kept = self._keep(n + 2)  # while the network works
        confirming += self._answered(writing)
        if confirming:
            self._confirm(confirming, self.reader.read([s.item.job.obj for s in confirming]))

    def _read_ahead(
        self, kept: _Turn, confirming: list[_Writing]
    ) -> tuple[list[_Write], Future[Fresh]]:
        """A batch's turn: journaled as backed up, then read (with read-backs riding on the
        read); the objects to write (once `_durable`), and the read."""
        ready = self._back_up(kept)
        objs = [w.job.obj for w in ready]
        backs = [sent.item.job.obj for sent in confirming]
        if self.size == 1:  # `--jobs 1`: the request right before a write reads that view alone
            return ready, self.pool.submit(self.reader.read, objs, backs)
        return ready, self.pool.submit(self.reader.read, objs + backs)

    def _keep(self, n: int) -> _Turn:
        """Batch n checked, and its backup files written ahead of its turn, one after another
        (each synced as it is written; at 100 ms a request, writing them side by side saved
        nothing measurable of the 500-view apply: 24.05 s against 24.35 s)."""
        return _checked(self.work, self.batches[n] if n < len(self.batches) else range(0))

    def _back_up(self, turn: _Turn) -> list[_Write]:
        """The batch's turn has come: its files journaled as backed up (durable at
        `_durable`); the objects that may be written."""
        for index, outcome in sorted(turn.settled.items()):
            self.done(index, outcome)
        ready = []
        for item in turn.writes:
            try:
                item.job.backup.record(item.line)
            except (WbmigrateError, OSError) as exc:
                self.done(item.index, _failed(item.job, one_line(exc)))
            else:
                ready.append(item)
        return ready

    def _durable(self, ready: list[_Write]) -> list[_Write]:
        """`ready` once each backup's files and journal are on disk; an object whose backup
        cannot be made durable fails, unwritten."""
        broken: dict[int, str] = {}
        for backup in {id(w.job.backup): w.job.backup for w in ready}.values():
            try:
                backup.sync()
            except OSError as exc:
                broken[id(backup)] = f"the backup cannot be made durable ({one_line(exc)})"
        for item in ready:
            if id(item.job.backup) in broken:
                self.done(item.index, _failed(item.job, broken[id(item.job.backup)]))
        return [w for w in ready if id(w.job.backup) not in broken]

    def _send(self, ready: list[_Write], fresh: Fresh) -> list[_Writing]:
        """Send at once the writes of the objects W&B still holds exactly as planned; the
        others are settled after, so the writes leave as soon as they may."""
        writes, others = [], []
        for w in ready:
            now = fresh.found.get(w.job.obj.id)
            if now is not None and now.fingerprint == w.job.obj.fingerprint:
                writes.append(_Writing(w, now, self.pool.submit(write, self.client, now, w.text)))
            else:
                others.append((w, now))
        for w, now in others:
            self.done(w.index, _not_sent(w.job, now, fresh.failed.get(w.job.obj.id)))
        return writes

    def _answered(self, writes: list[_Writing]) -> list[_Writing]:
        """The writes W&B answered; the others failed."""
        sent = []
        for writing in writes:
            try:
                writing.answer.result()
            except (WbmigrateError, OSError) as exc:
                self.done(writing.item.index, _failed(writing.item.job, one_line(exc)))
            else:
                sent.append(writing)
        return sent

    def _confirm(self, confirming: list[_Writing], fresh: Fresh) -> None:
        for sent in confirming:
            job = sent.item.job
            error = fresh.failed.get(job.obj.id)
            if error is not None:  # sent, not confirmed: the journal says what was sent
                self.done(sent.item.index, _failed(job, error))
            else:
                self.done(sent.item.index, _confirmed(sent, fresh.found.get(job.obj.id)))


def _checked(work: Sequence[Queued], batch: range) -> _Turn:
    """The checks before any write of a batch's objects (`to_send`), each object and its plan
    read back from the spool, and the backup file of each that passes (`_kept`): one object
    that trips over a bug fails alone, as in planning."""
    turn = _Turn()
    for index in batch:
        try:
            job = work[index].job()
            text = outcomes.to_send(job)
        except WbmigrateError as exc:  # the spool could not be read
            text = Outcome(work[index].ref, WriteStatus.FAILED, one_line(exc))
        except Exception as exc:
            text = Outcome(work[index].ref, WriteStatus.FAILED, bug(exc))
        turn.add(index, text if isinstance(text, Outcome) else _kept(_Write(index, job, text)))
    return turn


def _kept(item: _Write) -> _Write | Outcome:
    """One object's backup file, written ahead of its turn (its journal line kept with it);
    its outcome when that fails."""
    try:
        return replace(item, line=item.job.backup.keep(item.job.obj, item.text))
    except (WbmigrateError, OSError) as exc:
        return _failed(item.job, one_line(exc))


def _discard(turn: _Turn) -> None:
    """The files of a batch whose turn never came: never journaled, removed."""
    for item in turn.writes:
        item.job.backup.discard(item.line)


def _failed(job: Job, why: str) -> Outcome:
    return Outcome(job.obj.ref, WriteStatus.FAILED, why)


def _not_sent(job: Job, now: LiveObject | None, error: str | None) -> Outcome:
    """An object the last read showed gone or changed (or could not show): not written,
    and journaled so, for rollback to leave it alone."""
    reason = "changed" if now is not None else "gone"
    try:
        job.backup.not_written(job.obj, reason if error is None else "could not be read again")
    except (WbmigrateError, OSError) as exc:
        return _failed(job, one_line(exc))
    if error is not None or now is None:
        return _failed(job, error or "no longer exists")
    return outcomes.changed(job)


def _confirmed(sent: _Writing, back: LiveObject | None) -> Outcome:
    """What a write came to, from its read-back; journaled."""
    job = sent.item.job
    obj, changes = job.obj, len(job.plan.changes)
    status = outcomes.verdict(sent.before, sent.item.text, sent.answer.result(), back)
    try:
        if status is WriteStatus.APPLIED:
            job.backup.written(obj)
            return Outcome(obj.ref, status, changes=changes)
        if back is None:
            return Outcome(obj.ref, status, outcomes.GONE, changes)
        if status is WriteStatus.CONFLICT:
            job.backup.conflict(obj, back)
    except (WbmigrateError, OSError) as exc:
        return Outcome(obj.ref, WriteStatus.FAILED, one_line(exc))
    return Outcome(obj.ref, status, outcomes.MESSAGES["apply", status], changes)
