"""Work over many files on every core: this process and workers forked from it share the
items, and the results come back in the items' order, so what is printed is the same byte for
byte as working through them one by one. `check` uses it.

The work is CPU-bound Python, so threads would not help. Workers are forked, inheriting the
migration and its compiled patterns instead of being sent them. The items go in chunks: the
workers take them from the front, this process from the back (its own results need no
sending), until they meet. Where `fork` is not the safe default (macOS, Windows), or while
another thread runs, everything is done here, one item after the other.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing.context import BaseContext
from typing import Any, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

CHUNK = 32  # items a worker is sent at a time: few messages, shares still even


def cores() -> int:
    """The cores this process may run on (1 where workers are never forked)."""
    return len(os.sched_getaffinity(0)) if sys.platform == "linux" else 1


def can_fork(processes: int) -> bool:
    """Whether `processes` processes (this one included) may be had by forking workers now:
    on Linux, and while no other thread runs (forking then could copy a lock it holds)."""
    return processes >= 2 and sys.platform == "linux" and threading.active_count() == 1


def each(
    items: Sequence[T],
    work: Callable[[T], R],
    processes: int = 1,
    prepare: Callable[[], object] | None = None,
) -> list[R]:
    """`work(item)` for each item, in order, on `processes` processes, this one included,
    `CHUNK` items at a time. `prepare` loads what the work needs before workers are forked,
    once for all."""
    if not can_fork(processes):
        return [work(item) for item in items]
    if prepare is not None:
        prepare()
    return _shared(items, work, processes - 1)


def _shared(items: Sequence[T], work: Callable[[T], R], workers: int) -> list[R]:
    """The results of `items`, from `workers` workers and this process. A chunk a worker took
    but could not send back (it was stopped, or a result could not be pickled) is done here."""
    global _job
    context = multiprocessing.get_context("fork")
    chunks = [items[i : i + CHUNK] for i in range(0, len(items), CHUNK)]
    job = _job = _Job(chunks, work, context)
    pool = ProcessPoolExecutor(workers, context, initializer=as_worker, initargs=(os.getpid(),))
    try:  # a Ctrl-C held back while sending is raised inside it, so the pool is shut down
        with uninterrupted():
            sent = _send(pool, len(chunks))
        done: dict[int, list[R]] = {}
        while (last := job.take(first=False)) is not None:
            done[last] = [work(item) for item in chunks[last]]
        for answer in map(_answer, sent):
            if answer is not None:
                done[answer[0]] = answer[1]
        return [
            result
            for i, chunk in enumerate(chunks)
            for result in (done[i] if i in done else [work(item) for item in chunk])
        ]
    finally:  # on Ctrl-C too: what no worker has started is dropped, not waited for
        with uninterrupted():
            pool.shutdown(cancel_futures=True)
        _job = None


@contextmanager
def uninterrupted() -> Iterator[None]:
    """Ctrl-C waits while the pool starts its processes and threads, or stops them: an
    interrupt inside the executor's own bookkeeping can leave it unable to shut down (a hang,
    or a traceback). It is delivered as soon as this is over; the workers, forked meanwhile,
    inherit the mask and ignore Ctrl-C anyway. A thread started meanwhile never takes it
    (Python handles it on the main thread in any case)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _send(pool: ProcessPoolExecutor, chunks: int) -> list[Future[Any]]:
    """A task per chunk, at most what the workers can take; none when no worker could be
    started (a limit on processes): this process then does every chunk itself."""
    try:
        return [pool.submit(_in_worker) for _ in range(chunks)]
    except OSError:
        return []


class _Job(Generic[T, R]):
    """The chunks, and which of them no process has taken yet (`[front, back)`, shared with
    the workers forked after it is made)."""

    def __init__(
        self, chunks: list[Sequence[T]], work: Callable[[T], R], context: BaseContext
    ) -> None:
        self.chunks = chunks
        self.work = work
        self._left = context.Array("i", [0, len(chunks)])

    def take(self, first: bool) -> int | None:
        """The first chunk left (a worker's), or the last (this process's); None when none is."""
        with self._left.get_lock():
            front, back = int(self._left[0]), int(self._left[1])
            if front >= back:
                return None
            if first:
                self._left[0] = front + 1
                return front
            self._left[1] = back - 1
            return back - 1


_job: _Job[Any, Any] | None = None  # what forked workers work on


def _answer(future: Future[Any]) -> Any:
    try:
        return future.result()
    except Exception:  # the worker was stopped, or its results could not be sent back
        return None


PR_SET_PDEATHSIG = 1  # prctl(2): the signal the kernel sends this process when its parent ends


def as_worker(parent: int) -> None:
    """What a worker started by `parent` (forked, or spawned by `live.pool`) does first. Ctrl-C
    is the parent's to handle: it stops the workers, which say nothing. And the kernel ends the
    worker once the parent has ended, however it ended (killed, too): a worker blocked writing
    to a pipe no one reads any more, or reading from one no one writes, would otherwise wait for
    ever. Workers are started on Linux only, and by the main thread, which lives as long as its
    process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it ended before the kernel was told
        os._exit(1)


def _in_worker() -> tuple[int, list[Any]] | None:
    """The next chunk from the front, done: its index and its results."""
    assert _job is not None
    taken = _job.take(first=True)
    if taken is None:
        return None
    return taken, [_job.work(item) for item in _job.chunks[taken]]
