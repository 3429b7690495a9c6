"""Write planned objects to W&B, a batch at a time (see `live.apply` for why batches look the
way they do).

For each batch (as many objects as are written at once, `--jobs`): back up the originals,
read the batch again in one request, make the backup durable, and send together the writes of
the objects still exactly as planned. The read of batch n+1 goes out once batch n-1's writes are
answered, while batch n's read may still be out, and carries batch n-1's read-backs; its writes
leave once that read and batch n's writes are answered: never more than `--jobs` writes in
flight, and no turn of the run spent on a read alone. Meanwhile the checks of the batch after
run (the saved plan; its new text spliced, and the data-loss guard on those exact bytes) and its
backup files are written, each synced. A batch is only journaled as backed up once its read is
due (its files, if the run stops first, are removed), so an object that is backed up is an
object whose write was started; the journal line is on disk before the write leaves. With
`--jobs 1` nothing overlaps: each object is read, written and read back on its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from queue import Empty, Queue
from typing import Any

from wbmigrate.errors import WbmigrateError, bug
from wbmigrate.live.client import Client
from wbmigrate.live.objects import BATCH, Fresh, LiveObject, Reader, write
from wbmigrate.live.outcomes import (
    GONE,
    MESSAGES,
    Batch,
    Job,
    Outcome,
    Progress,
    WriteStatus,
    one_line,
    since,
    to_send,
    verdict,
)

Item = tuple[int, Job]  # a job, and its place in the work
Checked = tuple[int, Job, Outcome | str]  # a job, and what to send or why nothing is
Kept = tuple[int, Job, str, dict[str, Any]]  # a job, what to send, its backup file's line
Ready = tuple[int, Job, str]  # a job backed up, and what to send
Writing = tuple[int, Job, LiveObject, str, Future[str | None]]


def apply_all(
    client: Client,
    work: Sequence[Job],
    jobs: int,
    progress: Progress | None = None,
    stopping: Callable[[], None] | None = None,
    note: Callable[[str], None] | None = None,
) -> Batch:
    """Write `work` in batches of `jobs` objects; outcomes in the order of `work`. The batches
    run on a thread of their own, so a Ctrl-C reaches only this one: it starts no new batch
    (`stopping` is told) and waits for those in flight (the one being written, and the next
    one once it is backed up), their read-backs included, through further Ctrl-Cs. `note`
    hears that the server refused a batched read (once)."""
    size = max(1, min(jobs, BATCH))
    indexed = list(enumerate(work))
    batches = [indexed[i : i + size] for i in range(0, len(indexed), size)]
    stop = threading.Event()
    # In flight at once: a batch's writes, the next batch's read (a task of its own) and the
    # requests of that read side by side, one per view when the server refuses batched reads
    # (that batch and the read-back of an earlier one: twice the batch). The pool lives for
    # the run: its threads keep their connections.
    with ThreadPoolExecutor(max_workers=3 * size + 2) as pool:
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
    """A write W&B answered: the object just before it, what was sent, and the time W&B
    gave the save."""

    index: int
    job: Job
    before: LiveObject
    text: str
    saved_at: str | None


class _Run:
    """The batches of one run, on one thread: back up, make durable, read (with the read-back
    of the batch two before), write once the batch before is answered."""

    def __init__(
        self,
        client: Client,
        size: int,
        pool: ThreadPoolExecutor,
        note: Callable[[str], None] | None,
    ) -> None:
        self.client, self.size, self.pool = client, size, pool
        self.reader = Reader(client, pool, note)
        self.outcomes: dict[int, Outcome] = {}
        self.settled: Queue[Outcome] = Queue()
        self.error: BaseException | None = None

    def drive(self, batches: list[list[Item]], stop: threading.Event) -> None:
        try:
            if self.size == 1:
                self._one_at_a_time(batches, stop)
            else:
                self._overlapped(batches, stop)
        except BaseException as exc:  # a bug: raised in the main thread
            self.error = exc

    def _overlapped(self, batches: list[list[Item]], stop: threading.Event) -> None:
        """Batch n+1 is read once batch n-1's writes are answered, while batch n's read may
        still be out, made durable once batch n's writes have left, and written once its read
        and batch n's writes are answered. Its files are written while batch n waits."""
        ready, reading = self._read_ahead(self._keep(_checked_at(batches, 0)), [])
        ready = self._durable(ready)
        kept = self._keep(_checked_at(batches, 1))
        writing: list[Writing] = []  # batch n-1's writes, in flight
        confirming: list[_Sent] = []  # read back by batch n's read
        for n in range(len(batches)):
            answered = self._answered(writing)
            more = not stop.is_set() and n + 1 < len(batches)
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
            kept = self._keep(_checked_at(batches, n + 2))  # while the network works
        self._read_back(confirming + self._answered(writing))

    def _read_ahead(
        self, kept: tuple[list[Kept], list[tuple[int, Outcome]]], confirming: list[_Sent]
    ) -> tuple[list[Ready], Future[Fresh]]:
        """A batch's turn: journaled as backed up, then read (with read-backs riding on the
        read); the objects to write (once `_durable`), and the read."""
        ready = self._back_up(kept)
        objs = [job.obj for _, job, _ in ready] + [sent.job.obj for sent in confirming]
        return ready, self.pool.submit(self.reader.read, objs)

    def _one_at_a_time(self, batches: list[list[Item]], stop: threading.Event) -> None:
        """`--jobs 1`: each object read, written at once, then read back in a request of its
        own; nothing overlaps, nothing lies between the read and the write."""
        kept = self._keep(_checked_at(batches, 0))
        for n in range(len(batches)):
            if stop.is_set():
                _discard(kept)
                break
            ready = self._durable(self._back_up(kept))
            writes = self._send(ready, self.reader.read([job.obj for _, job, _ in ready]))
            kept = self._keep(_checked_at(batches, n + 1))  # while the write is in flight
            self._read_back(self._answered(writes))

    def _read_back(self, confirming: list[_Sent]) -> None:
        if confirming:
            self._confirm(confirming, self.reader.read([s.job.obj for s in confirming]))

    def _done(self, index: int, outcome: Outcome) -> None:
        self.outcomes[index] = outcome
        self.settled.put(outcome)

    def _keep(self, checked: list[Checked]) -> tuple[list[Kept], list[tuple[int, Outcome]]]:
        """A batch's backup files, written side by side ahead of its turn (each synced as it
        is written), and the outcomes of the objects that will not be written."""
        saving = [(index, job, text) for index, job, text in checked if isinstance(text, str)]
        files = dict(zip([i for i, _, _ in saving], self.pool.map(_kept, saving), strict=True))
        kept, settled = [], []
        for index, job, text in checked:
            done = text if isinstance(text, Outcome) else files[index]
            if isinstance(done, Outcome):
                settled.append((index, done))
            elif isinstance(text, str):
                kept.append((index, job, text, done))
        return kept, settled

    def _back_up(self, batch: tuple[list[Kept], list[tuple[int, Outcome]]]) -> list[Ready]:
        """The batch's turn has come: its files journaled as backed up (durable at
        `_durable`); the objects that may be written, with what to send."""
        kept, settled = batch
        for index, outcome in settled:
            self._done(index, outcome)
        ready = []
        for index, job, text, line in kept:
            try:
                job.backup.record(line)
            except (WbmigrateError, OSError) as exc:
                self._done(index, Outcome(job.obj.ref, WriteStatus.FAILED, one_line(exc)))
            else:
                ready.append((index, job, text))
        return ready

    def _durable(self, ready: list[Ready]) -> list[Ready]:
        """`ready` once each backup's files and journal are on disk; an object whose backup
        cannot be made durable fails, unwritten."""
        broken: dict[int, str] = {}
        for backup in {id(job.backup): job.backup for _, job, _ in ready}.values():
            try:
                backup.sync()
            except OSError as exc:
                broken[id(backup)] = f"the backup cannot be made durable ({one_line(exc)})"
        for index, job, _ in ready:
            if id(job.backup) in broken:
                self._done(index, Outcome(job.obj.ref, WriteStatus.FAILED, broken[id(job.backup)]))
        return [(index, job, text) for index, job, text in ready if id(job.backup) not in broken]

    def _send(self, ready: list[Ready], fresh: Fresh) -> list[Writing]:
        """Send at once the writes of the objects W&B still holds exactly as planned; the
        others are settled after, so the writes leave as soon as they may."""
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

    def _answered(self, writes: list[Writing]) -> list[_Sent]:
        sent = []
        for index, job, before, text, future in writes:
            try:
                sent.append(_Sent(index, job, before, text, future.result()))
            except (WbmigrateError, OSError) as exc:
                self._done(index, Outcome(job.obj.ref, WriteStatus.FAILED, one_line(exc)))
        return sent

    def _confirm(self, confirming: list[_Sent], fresh: Fresh) -> None:
        for sent in confirming:
            error = fresh.failed.get(sent.job.obj.id)
            if error is not None:  # sent, not confirmed: the journal says what was sent
                self._done(sent.index, Outcome(sent.job.obj.ref, WriteStatus.FAILED, error))
            else:
                self._done(sent.index, _confirmed(sent, fresh.found.get(sent.job.obj.id)))


def _checked_at(batches: list[list[Item]], n: int) -> list[Checked]:
    return _checked(batches[n]) if n < len(batches) else []


def _checked(batch: list[Item]) -> list[Checked]:
    """The checks before any write of a batch's objects (`to_send`): one object that trips
    over a bug fails alone, as in planning."""
    checked: list[Checked] = []
    for index, job in batch:
        try:
            checked.append((index, job, to_send(job)))
        except Exception as exc:
            checked.append((index, job, Outcome(job.obj.ref, WriteStatus.FAILED, bug(exc))))
    return checked


def _kept(item: Checked) -> dict[str, Any] | Outcome:
    """One object's backup file, written ahead of its turn; its outcome when that fails."""
    _, job, text = item
    assert isinstance(text, str)
    try:
        return job.backup.keep(job.obj, text)
    except (WbmigrateError, OSError) as exc:
        return Outcome(job.obj.ref, WriteStatus.FAILED, one_line(exc))


def _discard(batch: tuple[list[Kept], list[tuple[int, Outcome]]]) -> None:
    """The files of a batch whose turn never came: never journaled, removed."""
    for _, job, _, line in batch[0]:
        job.backup.discard(line)


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
        return Outcome(obj.ref, WriteStatus.FAILED, one_line(exc))
    if now is None:
        return Outcome(obj.ref, WriteStatus.FAILED, "no longer exists")
    return Outcome(obj.ref, WriteStatus.SKIPPED, f"changed since {since(job)}; plan again")


def _confirmed(sent: _Sent, back: LiveObject | None) -> Outcome:
    """What a write came to, from its read-back; journaled."""
    obj, changes = sent.job.obj, len(sent.job.plan.changes)
    status = verdict(sent.before, sent.text, sent.saved_at, back)
    try:
        if status is WriteStatus.APPLIED:
            sent.job.backup.written(obj)
            return Outcome(obj.ref, status, changes=changes)
        if back is None:
            return Outcome(obj.ref, status, GONE, changes)
        if status is WriteStatus.CONFLICT:
            sent.job.backup.conflict(obj, back)
    except (WbmigrateError, OSError) as exc:
        return Outcome(obj.ref, WriteStatus.FAILED, one_line(exc))
    return Outcome(obj.ref, status, MESSAGES["apply", status], changes)
