"""The plan of a large live project on more cores: once a project proves large
(`live.project.LARGE` objects), the objects still to come are planned by `WORKERS` spawned
processes, a few ahead (`WINDOW`), and come back in their order.

Measured (the benchmark's plan, 100 ms a request, separate processes alternating with the
floor on a shared, loaded 2-core machine, 3 rounds): at 5,000 views + 1,000 automations 1.10x
the floor with it, 1.54x without (medians 8.64 s and 12.27 s, floor 8.02 s). At 500 + 100
the pool never starts (a worker's start and imports cost more than it saves there): 1.57x
and 1.56x (6 rounds). At 1,000 + 200, just past `LARGE`, 1.55x and 1.50x; at 2,000 + 400,
1.31x and 1.49x. Peak memory is the same (108 and 107 MiB at 5,000 views).
"""

from __future__ import annotations

import copyreg
import multiprocessing
import os
import pickle
import signal
import tempfile
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from wbmigrate.engine.model import Options
from wbmigrate.errors import WbmigrateError
from wbmigrate.live.objects import LiveObject
from wbmigrate.parallel import as_worker, uninterrupted
from wbmigrate.plan import Planned, Source, plan_one

if TYPE_CHECKING:
    from wbmigrate.mapping import Migration

WORKERS = 2  # the benchmark's best on 2 cores (1 worker: 1.25-1.33x the floor at 5,000 views)
WINDOW = 64  # objects handed to the workers ahead of the next one given back


def planned(
    objects: Iterable[tuple[LiveObject, Source]], migration: Migration, options: Options
) -> Iterator[tuple[LiveObject, Planned]]:
    """Each object and its plan (`plan.plan_one`), in order, planned by workers; a plan's
    `result` comes back without its `original` spec (nothing a plan shows needs it). A worker
    that ends is an error; Ctrl-C stops the workers, which ignore it. The main thread's."""
    try:  # the file is read by each worker as it starts: a worker is sent only its name
        with tempfile.NamedTemporaryFile(prefix="wbmigrate-plan-") as work:
            pickle.dump((migration, options), work)
            work.flush()
            yield from _in_workers(objects, work.name)
    except OSError as exc:  # no room for the file, or no process to be had
        raise WbmigrateError(f"the planning processes failed: {exc}") from None


def _in_workers(
    objects: Iterable[tuple[LiveObject, Source]], work: str
) -> Iterator[tuple[LiveObject, Planned]]:
    """`planned`, the migration and options in the file `work`. Sent with each worker as it
    starts, they held this process up until the worker had imported all it needs to read them
    (0.16 s a worker): they would not fit in the pipe."""
    context = multiprocessing.get_context("spawn")  # threads are reading: never fork
    with _starting():
        pool = ProcessPoolExecutor(WORKERS, context, _start, (work, os.getpid()))
    ahead: deque[tuple[LiveObject, Future[Planned]]] = deque()
    try:
        for obj, source in objects:
            with _starting():  # the pool starts a worker as it is given work
                ahead.append((obj, pool.submit(_plan, source)))
            if len(ahead) >= WINDOW:
                yield _result(*ahead.popleft())
        while ahead:
            yield _result(*ahead.popleft())
    except BrokenProcessPool:  # a worker ended: the pool says so at once, no wait for ever
        raise WbmigrateError("a planning process ended unexpectedly") from None
    finally:  # an error, Ctrl-C, or a consumer that stopped early: what is queued is dropped
        with uninterrupted():
            pool.shutdown(cancel_futures=True)


@contextmanager
def _starting() -> Iterator[None]:
    """Ctrl-C waits while the pool may start a worker (`parallel.uninterrupted`: its
    bookkeeping is never cut short), and the worker starts ignoring it: a spawned process's
    signal mask is cleared, but a signal ignored stays so, and Python leaves it so. A Ctrl-C
    meanwhile is delivered after (Linux keeps a blocked signal pending, ignored or not)."""
    with uninterrupted():
        handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, handler)


def _result(obj: LiveObject, future: Future[Planned]) -> tuple[LiveObject, Planned]:
    return obj, future.result()


def _read_only(items: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    return MappingProxyType(items)


# A Migration is read-only through and through; its mappings are sent to a worker as dicts.
copyreg.pickle(MappingProxyType, lambda proxy: (_read_only, (dict(proxy),)))

_work: tuple[Migration, Options] | None = None  # a worker's migration and options


def _start(work: str, parent: int) -> None:
    global _work
    as_worker(parent)  # it ends with this plan, however the plan ends
    with open(work, "rb") as saved:
        _work = pickle.load(saved)


def _plan(source: Source) -> Planned:
    assert _work is not None
    done = plan_one(source, *_work)
    if done.result is None:
        return done
    return replace(done, result=replace(done.result, original=None))  # not sent back
