"""One model of threads and Ctrl-C for every run of writes (`apply`'s batches, `rollback`'s
objects): the work goes on a thread of its own, so a Ctrl-C reaches only the command's, which
shows each outcome as it is settled; after a Ctrl-C no new object (or batch) is started
(`stopping` is told) and those in flight finish, through further Ctrl-Cs, so every write that
was sent ends with its journal lines and its outcome.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from queue import Empty, Queue
from typing import TypeVar

from wbmigrate.live.outcomes import Batch, Outcome, Progress

T = TypeVar("T")
Done = Callable[[int, Outcome], None]  # an outcome settled, by its place in the work
Drive = Callable[[threading.Event, Done], None]  # a run's body: until the event is set


def run_all(
    work: Iterable[T],
    task: Callable[[T], Outcome],
    jobs: int,
    progress: Progress | None = None,
    stopping: Callable[[], None] | None = None,
) -> Batch:
    """Run `task` over `work` on `jobs` threads; outcomes in the order of `work`. A Ctrl-C
    starts no new task and waits for those started, so every write that was sent ends with
    its journal lines."""
    items = list(work)

    def drive(stop: threading.Event, done: Done) -> None:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            started = pool.map(lambda item: None if stop.is_set() else task(item), items)
            for index, outcome in enumerate(started):
                if outcome is not None:
                    done(index, outcome)

    return run(drive, len(items), progress, stopping)


def run(
    drive: Drive, total: int, progress: Progress | None, stopping: Callable[[], None] | None
) -> Batch:
    """`drive` on a thread of its own while this one shows each outcome as it is settled and
    takes the Ctrl-Cs; a bug in `drive` is raised here once it has ended."""
    outcomes: dict[int, Outcome] = {}
    settled: Queue[Outcome] = Queue()
    stop = threading.Event()

    def done(index: int, outcome: Outcome) -> None:
        outcomes[index] = outcome
        settled.put(outcome)

    # Ctrl-C as an event while writes run, not an exception: a KeyboardInterrupt may land
    # between any two lines (as the driver starts, in the loop's condition) and would leave
    # writes in flight unfollowed.
    pressed = threading.Event()
    with ThreadPoolExecutor(1, "wbmigrate-apply") as pool, on_ctrl_c(lambda *_: pressed.set()):
        driver = pool.submit(drive, stop, done)
        interrupted = _follow(driver, settled, progress, stopping, stop, pressed)
    driver.result()  # a bug in `drive`, raised in the command's thread
    return Batch([outcomes[i] for i in sorted(outcomes)], interrupted, total - len(outcomes))


@contextlib.contextmanager
def on_ctrl_c(handler: Callable[..., object] | signal.Handlers) -> Iterator[None]:
    """Ctrl-C (SIGINT) goes to `handler` while the block runs. Only the main thread is told of
    a Ctrl-C: elsewhere no handler is needed, nor can one be set."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _follow(
    driver: Future[None],
    settled: Queue[Outcome],
    progress: Progress | None,
    stopping: Callable[[], None] | None,
    stop: threading.Event,
    pressed: threading.Event,
) -> bool:
    """Show each outcome as it is settled until the driver ends; whether a Ctrl-C came."""
    interrupted = False
    while not driver.done() or not settled.empty():
        if pressed.is_set() and not interrupted:
            interrupted = True
            stop.set()
            if stopping is not None:
                stopping()
        with contextlib.suppress(Empty):
            outcome = settled.get(timeout=0.05)
            if progress is not None and not interrupted:
                progress(outcome)
    return interrupted
