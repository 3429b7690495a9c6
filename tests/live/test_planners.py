"""Planning a live project in worker processes (`wbmigrate.live.planners`): the plans of one
process, in order, a share of them made here; a worker's objects are planned here when it
stops or cannot answer; the specs walked ahead of the census are bounded; `plan` with workers
prints what it prints without them."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from dataclasses import replace
from multiprocessing.reduction import ForkingPickler

import pytest
from helpers import FIXTURES, MIGRATION, REPO, TARGET, running, snapshot
from test_project import HISTORY, live_view

from wbmigrate.engine.model import Options
from wbmigrate.live import planners as planners_module
from wbmigrate.live.planners import Planners
from wbmigrate.plan import Planned, plan_one

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux")

FINAL = Options(history=HISTORY)


@pytest.fixture
def workers(monkeypatch):
    """Planners forked even though the test server's thread runs (a worker needs no lock it
    could hold), closed after the test."""
    monkeypatch.setattr(planners_module, "cores", lambda: 3)  # two workers
    monkeypatch.setattr(planners_module.threading, "active_count", lambda: 1)
    started = Planners.start()  # forked before the mapping is read: it is sent to them
    assert started is not None
    started.setup(MIGRATION, Options())
    yield started
    started.close()


def objects() -> list:
    """Every report case, and two specs that fail to plan."""
    found = [live_view(path) for path in sorted(FIXTURES.glob("cases/report/*/before.json"))]
    first = sorted(FIXTURES.glob("cases/report/*/before.json"))[0]
    return [*found, live_view(first, "{not json"), live_view(first, '{"blocks": 3}')]


def census_after(future: Future, count: int, found: list):
    """The objects, the census becoming known once `count` of them were listed."""
    for i, obj in enumerate(found):
        if i == count:
            future.set_result(FINAL)
        yield obj


def here(found: list) -> list[Planned]:
    return [plan_one(obj.source(), MIGRATION, FINAL) for obj in found]


def same(got: list[Planned], expected: list[Planned]) -> None:
    """The same plans; a worker's comes back without the parsed spec (a plan needs none)."""
    assert [p.source for p in got] == [p.source for p in expected]
    assert [p.error for p in got] == [p.error for p in expected]
    assert [p.result and replace(p.result, original=None) for p in got] == [
        p.result and replace(p.result, original=None) for p in expected
    ]


@pytest.mark.parametrize("known_after", [0, 5, 10_000], ids=["census-first", "midway", "last"])
def test_workers_plan_what_this_process_plans_in_order(workers, known_after):
    found = objects()
    census: Future = Future()
    if known_after >= len(found):
        threading.Timer(0.2, census.set_result, (FINAL,)).start()
    got = [p for _, p in workers.plan(census_after(census, known_after, found), census, 10**9)]
    same(got, here(found))
    assert any(p.result is not None and p.result.original is None for p in got)  # from workers


def test_this_process_plans_its_share_while_the_workers_plan_the_rest(workers):
    """With two workers, one object in five is planned here (its plan keeps the parsed spec)."""
    found = objects()
    census: Future = Future()
    threading.Timer(0.2, census.set_result, (FINAL,)).start()
    got = [p for _, p in workers.plan(iter(found), census, 10**9)]
    same(got, here(found))
    kept = [n for n, p in enumerate(got) if p.result is not None and p.result.original is not None]
    planned = [n for n, p in enumerate(got) if p.result is not None]
    assert kept == [n for n in planned if n % 5 == 4]


def test_what_a_stopped_worker_owed_is_planned_here(workers):
    found = objects()
    census: Future = Future()
    workers.processes[0].kill()  # as when the system stops a worker
    workers.processes[0].join()
    threading.Timer(0.2, census.set_result, (FINAL,)).start()
    got = [p for _, p in workers.plan(iter(found), census, 10**9)]
    same(got, here(found))


def test_an_answer_that_cannot_be_sent_back_is_planned_here(monkeypatch):
    mine = os.getpid()
    unsendable = here(objects()[:1])[0]

    def planned_in_worker(source, migration, options):
        if os.getpid() != mine:  # a result that does not pickle
            return replace(unsendable, result=replace(unsendable.result, kind=lambda: 0))
        return plan_one(source, migration, options)

    def walked_in_worker(source, migration, options):  # before the census: settled after
        return lambda final: planned_in_worker(source, migration, final)

    monkeypatch.setattr(planners_module, "plan_one", planned_in_worker)
    monkeypatch.setattr(planners_module, "plan_early", walked_in_worker)
    monkeypatch.setattr(planners_module.threading, "active_count", lambda: 1)
    monkeypatch.setattr(planners_module, "cores", lambda: 2)
    started = Planners.start()
    assert started is not None
    started.setup(MIGRATION, Options())
    try:
        found = objects()
        census: Future = Future()
        census.set_result(FINAL)
        got = [p for _, p in started.plan(iter(found), census, 10**9)]
    finally:
        started.close()
    same(got, here(found))
    assert all(p.result is None or p.result.original is not None for p in got)  # all here


class ArrivingPipe:
    """A worker's end of its pipe, the messages arriving in batches: `poll` says whether more
    of the batch being read has arrived; what the worker sends back is recorded."""

    def __init__(self, *batches: list[tuple]) -> None:
        self.batches = [list(batch) for batch in batches]
        self.events: list[tuple[str, int]] = []

    def recv(self) -> tuple:
        while not self.batches[0]:
            self.batches.pop(0)
        return self.batches[0].pop(0)

    def poll(self) -> bool:
        return bool(self.batches[0])

    def send(self, answers: list[tuple]) -> None:
        self.events += [("answered", n) for n, _ in answers]


def test_the_census_overtakes_the_objects_still_to_walk(monkeypatch):
    """Objects sent before the census but not walked yet when it arrives are walked after the
    plans held are answered, so the output of those is written meanwhile."""
    pipe = ArrivingPipe(
        [("setup", MIGRATION, Options()), plan_message(0)],
        [plan_message(1), plan_message(2), ("census", FINAL), plan_message(3), ("end",)],
    )

    def walked(source, migration, options):
        pipe.events.append(("walked", int(source.name)))
        return lambda final: Planned(source)

    def planned(source, migration, options):
        pipe.events.append(("walked", int(source.name)))
        return Planned(source)

    monkeypatch.setattr(planners_module, "plan_early", walked)
    monkeypatch.setattr(planners_module, "plan_one", planned)
    planners_module._work(pipe)
    assert pipe.events == [
        ("walked", 0),
        ("answered", 0),  # held when the census came: answered before 1 and 2 are walked
        *[event for n in (1, 2, 3) for event in (("walked", n), ("answered", n))],
    ]


def plan_message(n: int) -> tuple:
    return ("plan", n, (str(n), "origin", "{}", "report", None))


def test_specs_walked_ahead_of_the_census_are_bounded(workers):
    """Once the specs sent go over the bound, the next object waits for the census."""
    found = objects()
    census: Future = Future()
    pulled_before_census = []

    def listed():
        for obj in found:
            pulled_before_census.append(not census.done())
            yield obj

    threading.Timer(0.3, census.set_result, (FINAL,)).start()
    got = [p for _, p in workers.plan(listed(), census, 1)]  # one object at most
    same(got, here(found))
    assert pulled_before_census[0]  # the first went over the bound
    assert not any(pulled_before_census[1:])


def test_no_worker_is_forked_while_another_thread_runs():
    release = threading.Event()
    thread = threading.Thread(target=release.wait, args=(5,))
    thread.start()
    try:
        assert Planners.start() is None
    finally:
        release.set()
        thread.join()


ORPHANED = """
import os
from wbmigrate.live import planners
planners.cores = lambda: 3
started = planners.Planners.start()
print(*(p.pid for p in started.processes), flush=True)
os._exit(0)  # as if killed: the workers are never told to end
"""


def test_a_worker_ends_when_the_process_that_forked_it_is_gone():
    done = subprocess.run(
        [sys.executable, "-c", ORPHANED], capture_output=True, text=True, timeout=60, check=True
    )
    pids = [int(pid) for pid in done.stdout.split()]  # the pipe closed: no worker holds it
    assert len(pids) == 2
    deadline = time.monotonic() + 10
    while any(map(running, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(running, pids))


def as_a_user(live, tmp_path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m wbmigrate ARGS` against the test server: it has no other thread when it
    starts, so it plans in workers (on a machine with more than one core); CliRunner's run
    has the server's thread, so it does not."""
    env = {
        **os.environ,
        "WANDB_API_KEY": live.api_key,
        "WANDB_BASE_URL": live.url,
        "PYTHONPATH": str(REPO),
        "HOME": str(tmp_path),
    }
    command = [sys.executable, "-m", "wbmigrate", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def test_plan_with_workers_prints_what_plan_without_them_prints(run, live, tmp_path):
    for format_ in ("text", "json"):
        done = as_a_user(live, tmp_path, "plan", TARGET, "--format", format_)
        alone = run("plan", TARGET, "--format", format_)
        assert done.returncode == alone.exit_code == 0, done.stderr
        assert done.stdout == alone.stdout
        if format_ == "json":
            assert json.loads(done.stdout)["objects"]


def test_apply_with_workers_writes_what_apply_without_them_writes(run, live, tmp_path):
    original = snapshot(live)
    done = as_a_user(live, tmp_path, "apply", TARGET, "--yes", "--backup-dir", "b1")
    assert done.returncode == 0, done.stderr
    with_workers = snapshot(live)
    assert with_workers[0] != original[0]
    assert run("rollback", "b1", "--yes").exit_code == 0
    assert snapshot(live)[0] == original[0]
    alone = run("apply", TARGET, "--yes", "--backup-dir", "b2")
    assert alone.exit_code == 0
    assert snapshot(live)[0] == with_workers[0]
    assert conditions(snapshot(live)) == conditions(with_workers)
    assert done.stdout.replace("b1", "b2") == alone.stdout


def conditions(snapped) -> dict:
    """The automations as written, without the times of their saves."""
    triggers = {i: json.loads(t) for i, t in snapped[1].items()}
    return {i: {k: v for k, v in t.items() if not k.endswith("At")} for i, t in triggers.items()}


def test_a_migration_is_sent_to_the_workers_as_its_fields_alone():
    """Its derived name sets may be building on the census's thread while it is sent: only
    the fields are pickled, and the workers' copy equals it."""
    MIGRATION.mention  # built here: it is not sent  # noqa: B018
    data = bytes(ForkingPickler.dumps(MIGRATION))
    assert b"mention" not in data
    copy = pickle.loads(data)
    assert copy == MIGRATION
    assert copy.old_names == MIGRATION.old_names
