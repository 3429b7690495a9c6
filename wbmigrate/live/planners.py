"""Plan a live project's objects on the other cores while it is read (`plan` and `apply` of one
project).

Planning is CPU-bound Python. In the process that also reads the listings and the key census
it takes the interpreter's one lock from them, and the census, which every plan waits for,
finishes late. So, on Linux with more than one core, workers forked before the listings'
threads start (forking while a thread runs could copy a lock it holds), and before the mapping
is read (it is sent to them once read, `setup`), do the planning: each object's text is sent
to a worker, walked there while the census reads (`plan_early`) and settled once the census is
sent after it. This process, mostly waiting on the network meanwhile, plans a share of the
objects itself (`HERE_EVERY`), so the workers are not what the output waits for once the
listings end. What comes back is the plan without the parsed spec (a plan is its changes and
notes), so answers are small. Results are taken in the objects' order, so the output is that
of one process byte for byte. An object a worker could not plan or answer for (it was stopped,
or its answer could not be pickled) is planned here.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import replace
from multiprocessing.connection import Connection
from multiprocessing.context import ForkProcess
from multiprocessing.reduction import ForkingPickler
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from wbmigrate.live.objects import LiveObject
from wbmigrate.parallel import as_worker, can_fork, cores, uninterrupted, without_cycle_collection

if TYPE_CHECKING:  # the plan's data model loads with the mapping, after the first requests
    from wbmigrate.engine.model import Options, Rewrite
    from wbmigrate.mapping import Migration
    from wbmigrate.plan import Planned, Source

    Answer = tuple[Rewrite | None, str | None] | None  # a plan's result and error; None: here
    Here = Callable[[Options], Planned]  # an object planned here: walked, settled with the census


# Of every 2 * workers + 1 objects, this process plans one: a worker plans twice as many as it
# does, as it also reads the listings and prints (measured best of 1/2, 1/3 and 1/4 on 2 cores).
HERE_EVERY = 2

# Plans held till the census is known are answered this many to a message: hundreds of small
# messages each woke the thread that receives them, which took the interpreter from the one
# printing the plan.
REPLY_CHUNK = 32


@contextmanager
def planning() -> Iterator[Planners | None]:
    """Planning workers (None where there can be none) for what the block does, stopped at its
    end; the cycle collector paused meanwhile, here and in the workers, forked now: before the
    listings' threads start."""
    with without_cycle_collection():
        planners = Planners.start()
        try:
            yield planners
        finally:
            if planners is not None:
                planners.close()


class Planners:
    """Worker processes that plan objects with the migration `setup` gives; `None` from
    `start` where there can be none (one core, not Linux, a thread already running, a process
    limit)."""

    def __init__(self) -> None:
        self.migration: Migration | None = None
        self.options: Options | None = None  # without the census, for objects planned here early
        self.pipes: list[Connection] = []
        self.processes: list[ForkProcess] = []
        self.answers: dict[int, Future[Answer]] = {}  # by object, till answered
        self.stopped: set[int] = set()  # workers that answer no more
        self.lock = threading.Lock()

    @classmethod
    def start(cls) -> Planners | None:
        if not can_fork(cores()):
            return None
        planners = cls()
        context = multiprocessing.get_context("fork")
        with uninterrupted():
            for _ in range(cores() - 1):
                ours, theirs = context.Pipe()
                inherited = [*planners.pipes, ours]  # this process's ends, copied by the fork
                process = context.Process(
                    target=_serve, args=(theirs, inherited, os.getpid()), daemon=True
                )
                try:
                    process.start()
                except OSError:  # no process could be started: plan here
                    break
                theirs.close()
                planners.pipes.append(ours)
                planners.processes.append(process)
        if not planners.pipes:
            return None
        for n, pipe in enumerate(planners.pipes):
            threading.Thread(
                target=planners._receive, args=(pipe,), name=f"planner-{n}", daemon=True
            ).start()
        return planners

    def setup(self, migration: Migration, options: Options) -> None:
        """The migration and options (without the census) to plan with, sent to each worker."""
        from wbmigrate.plan import load_engine

        self.migration, self.options = migration, options
        for pipe in self.pipes:
            _sent(pipe, ("setup", migration, options))
        load_engine()  # here and in the workers, while the first pages are on their way

    def plan(
        self, objects: Iterator[LiveObject], final: Future[Options], held_at_most: int
    ) -> Iterator[tuple[LiveObject, Planned]]:
        """Each object with its plan, in order. Until the census (`final`) is known, at most
        `held_at_most` bytes of specs wait in the workers, walked; then it is sent to them."""
        waiting: deque[tuple[LiveObject, Future[Answer] | Here]] = deque()
        held, told = 0, False
        for n, obj in enumerate(objects):
            waiting.append((obj, self._here(obj) if self._mine(n) else self._send(n, obj.source())))
            held += len(obj.text)
            if not told and (final.done() or held > held_at_most):
                told = self._tell(final.result())  # the census is known, or waited for
            while waiting and (_ready(waiting[0][1], final) or (told and held > held_at_most)):
                first, answer = waiting.popleft()
                held -= len(first.text)
                yield first, self._planned(first, answer, final)
        if not told:
            self._tell(final.result())
        for obj, answer in waiting:
            yield obj, self._planned(obj, answer, final)

    def close(self) -> None:
        """Stop the workers (each ends once told, or when its pipe closes)."""
        for pipe in self.pipes:
            _sent(pipe, ("end",))
            pipe.close()
        for process in self.processes:
            process.join(timeout=1)
            if process.is_alive():
                process.terminate()
                process.join(timeout=1)

    def _mine(self, n: int) -> bool:
        every = HERE_EVERY * len(self.pipes) + 1
        return n % every == every - 1

    def _here(self, obj: LiveObject) -> Here:
        assert self.migration is not None, "setup() comes first"
        assert self.options is not None, "setup() comes first"
        return plan_early(obj.source(), self.migration, self.options)

    def _send(self, n: int, source: Source) -> Future[Answer]:
        answer: Future[Answer] = Future()
        worker = n % len(self.pipes)
        with self.lock:
            if worker in self.stopped:
                answer.set_result(None)
                return answer
            self.answers[n] = answer
        pipe = self.pipes[worker]
        fields = (source.name, source.origin, source.text, source.kind, source.error)
        if not _sent(pipe, ("plan", n, fields)):
            self._answer(n, None)
        return answer

    def _tell(self, final: Options) -> bool:
        for pipe in self.pipes:
            _sent(pipe, ("census", final))
        return True

    def _planned(
        self, obj: LiveObject, answer: Future[Answer] | Here, final: Future[Options]
    ) -> Planned:
        from wbmigrate.plan import Planned

        if not isinstance(answer, Future):
            return answer(final.result())
        source = obj.source()
        answered = answer.result()
        if answered is None:  # a worker could not: plan here
            assert self.migration is not None, "setup() comes first"
            return plan_one(source, self.migration, final.result())
        result, error = answered
        return Planned(source, result, error)

    def _receive(self, pipe: Connection) -> None:
        """A worker's answers, as they come; when it stops, what it still owed is planned here."""
        mine = self.pipes.index(pipe)
        while True:
            try:
                answers = pipe.recv()
            except (EOFError, OSError, ValueError):  # stopped, or closed by `close`
                break
            for n, answered in answers:
                self._answer(n, answered)
        with self.lock:
            self.stopped.add(mine)
            owed = [n for n in self.answers if n % len(self.pipes) == mine]
        for n in owed:
            self._answer(n, None)

    def _answer(self, n: int, answered: Answer) -> None:
        with self.lock:
            answer = self.answers.pop(n, None)
        if answer is not None:
            answer.set_result(answered)


def plan_one(source: Source, migration: Migration, options: Options) -> Planned:
    """`wbmigrate.plan.plan_one`, whose module (the plan's data model) loads only once a
    plan's first requests are out."""
    from wbmigrate import plan

    return plan.plan_one(source, migration, options)


def plan_early(source: Source, migration: Migration, options: Options) -> Here:
    """`wbmigrate.plan.plan_early`, loaded as `plan_one` is."""
    from wbmigrate import plan

    return plan.plan_early(source, migration, options)


def _ready(answer: Future[Answer] | Here, final: Future[Options]) -> bool:
    """Whether an object's plan can be had without waiting: a worker answered, or, planned
    here, the census is known."""
    return answer.done() if isinstance(answer, Future) else final.done()


def _sent(pipe: Connection, message: tuple[Any, ...]) -> bool:
    try:
        pipe.send(message)
        return True
    except (OSError, ValueError):  # the worker is gone: its objects are planned here
        return False


def _serve(pipe: Connection, inherited: list[Connection], parent: int) -> None:
    """A worker process. The ends of the pipes the fork copied from the process that forked it
    are closed first: once that process is gone, however it went, the worker's pipe is at its
    end and the worker ends. Any failure ends it quietly (the objects it owed are planned by
    that process)."""
    for end in inherited:
        end.close()
    as_worker(parent)
    try:
        _work(pipe)
    except BaseException:  # never a traceback from a worker
        return


def _work(pipe: Connection) -> None:
    """Given the migration (`setup`), plan each object sent: walked at once and held until the
    census is sent, then settled. The census is taken as soon as it arrives, ahead of the
    objects sent before it and not walked yet: the plans held are answered first, and their
    output is written while the rest are walked."""
    from wbmigrate.plan import Source, load_engine

    held: list[tuple[int, Callable[[Options], Planned]]] = []
    final: Options | None = None
    inbox: deque[tuple[Any, ...]] = deque()
    _, migration, options = pipe.recv()
    load_engine()
    while True:
        while not inbox or pipe.poll():  # all that has arrived
            message: tuple[Any, ...] = pipe.recv()
            if message[0] == "census":
                final = message[1]
                for start in range(0, len(held), REPLY_CHUNK):
                    chunk = held[start : start + REPLY_CHUNK]
                    _reply(pipe, [(n, finish(final)) for n, finish in chunk])
                held.clear()
            else:
                inbox.append(message)
        message = inbox.popleft()
        if message[0] != "plan":
            return
        _, n, fields = message
        source = Source(*fields)
        if final is None:
            held.append((n, plan_early(source, migration, options)))
        else:
            _reply(pipe, [(n, plan_one(source, migration, final))])


def _read_only(items: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    return MappingProxyType(items)


# A migration's tables are read-only views, which pickle cannot send as they are: sent to a
# worker as their items, they are views again there.
ForkingPickler.register(MappingProxyType, lambda view: (_read_only, (dict(view),)))


def _reply(pipe: Connection, planned: list[tuple[int, Planned]]) -> None:
    """Plans without their parsed specs, in one message; one that cannot be sent is None
    (it is planned again)."""
    answers = [(n, _answer_of(p)) for n, p in planned]
    try:
        pipe.send(answers)
    except _UNSENDABLE:
        for n, answer in answers:
            try:
                pipe.send([(n, answer)])
            except _UNSENDABLE:
                pipe.send([(n, None)])


def _answer_of(planned: Planned) -> Answer:
    return (replace(planned.result, original=None) if planned.result else None), planned.error


_UNSENDABLE = (pickle.PicklingError, TypeError, AttributeError, ValueError, RecursionError)
