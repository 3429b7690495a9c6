"""A large live plan on more cores (`live.pool`): the test project counts as large from its
third object on, so all but two of its objects are planned by spawned workers."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from helpers import MIGRATION, REPO, TARGET, running, until

from wbmigrate.engine.model import Options
from wbmigrate.errors import WbmigrateError
from wbmigrate.live import pool
from wbmigrate.live import project as live_project
from wbmigrate.live.client import Client
from wbmigrate.live.project import Project, plan_project, walking


@pytest.fixture
def large(monkeypatch):
    monkeypatch.setattr(live_project, "LARGE", 2)
    yield
    assert multiprocessing.active_children() == []  # no worker left behind


def planned_by(run, tmp_path, monkeypatch, large: int, *args: str):
    """Exit code, stdout, stderr and the saved plan (less its time) of `plan TARGET`."""
    monkeypatch.setattr(live_project, "LARGE", large)
    (tmp_path / str(large)).mkdir()
    monkeypatch.chdir(tmp_path / str(large))  # the plan saved to ./plan.json both times
    result = run("plan", TARGET, "--out", "plan.json", *args)
    saved = json.loads(Path("plan.json").read_text())
    del saved["created"]
    return result.exit_code, result.stdout, result.stderr, saved


@pytest.mark.parametrize("format_", ["text", "json"])
def test_a_pooled_plan_is_the_same_byte_for_byte(live, run, tmp_path, monkeypatch, format_):
    here = planned_by(run, tmp_path, monkeypatch, 10**9, "--format", format_, "-v")
    pooled = planned_by(run, tmp_path, monkeypatch, 2, "--format", format_, "-v")
    assert pooled == here
    assert multiprocessing.active_children() == []


def kill_workers() -> None:
    for worker in multiprocessing.active_children():
        os.kill(worker.pid, signal.SIGKILL)


def test_a_worker_that_dies_is_one_error_line(live, run, large, monkeypatch):
    result_of = pool._result

    def killing(*args):
        kill_workers()
        return result_of(*args)

    monkeypatch.setattr(pool, "WINDOW", 1)  # objects are left to plan when they die
    monkeypatch.setattr(pool, "_result", killing)
    result = run("plan", TARGET)
    assert result.exit_code == 2
    assert result.stderr.count("Error:") == 1
    assert "Error: a planning process ended unexpectedly\n" in result.stderr
    assert "Traceback" not in result.stderr


def test_ctrl_c_during_a_pooled_plan_exits_130(live, run, large, monkeypatch):
    def interrupted(*_args):
        raise KeyboardInterrupt

    monkeypatch.setattr(pool, "_result", interrupted)
    result = run("plan", TARGET)
    assert result.exit_code == 130
    assert result.stderr.endswith("Interrupted; nothing written.\n")


def test_workers_are_handed_a_few_objects_ahead(live, large, monkeypatch):
    monkeypatch.setattr(pool, "WINDOW", 3)
    project = Project(Client(live.url, live.api_key), "team", "async-rl")
    taken = 0

    def counted(objects):
        nonlocal taken
        for item in objects:
            taken += 1
            yield item

    objects = walking(project.read(), MIGRATION, Options(), project.client.base_url)
    given = 0
    for _ in plan_project(project, MIGRATION, Options(), walked=counted(objects)):
        given += 1
        assert taken - given < pool.WINDOW
    assert given == taken == 11


def test_a_dead_pool_is_a_wbmigrate_error(live, large, monkeypatch):
    monkeypatch.setattr(pool, "WINDOW", 1)
    project = Project(Client(live.url, live.api_key), "team", "async-rl")
    stream = plan_project(project, MIGRATION, Options())
    for _ in range(3):  # the third is the first a worker planned
        next(stream)
    kill_workers()
    with pytest.raises(WbmigrateError, match="planning process ended"):
        list(stream)


# `plan TARGET --runs 0`, the project large from its third object on, in a process of its own.
LARGE_PLAN = (
    "import sys\n"
    "from wbmigrate.live import project\n"
    "from wbmigrate.cli import main\n"
    "project.LARGE = 2\n"
    "sys.argv = ['wbmigrate', 'plan', sys.argv[1], '--runs', '0']\n"
    "main()\n"
)


def children(pid: int) -> set[int]:
    """The processes `pid` started that still run."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, parent = stat.read_text().rsplit(")", 1)[1].split()[:2]
        except OSError:  # it ended meanwhile
            continue
        if int(parent) == pid and state != "Z":
            found.add(int(stat.parent.name))
    return found


def start_plan(live, tmp_path: Path, gate: threading.Event, **popen: Any) -> subprocess.Popen:
    """`LARGE_PLAN`, the automations' listing held until `gate` is set (its temporary files
    under `tmp_path`)."""
    live.hooks["WbmigrateTriggers"] = lambda _variables: gate.wait(60)
    env = {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(tmp_path / "home")}
    env["TMPDIR"] = str(tmp_path)
    return subprocess.Popen([sys.executable, "-c", LARGE_PLAN, TARGET], env=env, **popen)


def ignores_ctrl_c(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status").read_text()
    ignored = int(status.split("SigIgn:")[1].split()[0], 16)
    return bool(ignored & 1 << (signal.SIGINT - 1))


def test_ctrl_c_reaches_a_pooled_plan_and_leaves_no_worker(live, tmp_path):
    """A terminal's Ctrl-C goes to every process of the group: the workers ignore it, the plan
    stops them and exits 130. The automations' listing is held, so the plan is mid-way (its
    workers started on the views before, none walked while a census came: `--runs 0`) when
    the signal comes."""
    gate = threading.Event()
    plan = start_plan(
        live,
        tmp_path,
        gate,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a group of its own, as a terminal's job
    )
    try:
        workers = until(lambda: len(children(plan.pid)) >= 2 and children(plan.pid), "no pool")
        assert all(ignores_ctrl_c(pid) for pid in workers)  # from the start
        os.killpg(plan.pid, signal.SIGINT)
        _, err = plan.communicate(timeout=60)
    finally:
        gate.set()
        if plan.poll() is None:
            plan.kill()
    assert plan.returncode == 130
    assert err.endswith("Interrupted; nothing written.\n")
    assert "Traceback" not in err
    until(lambda: not any(running(pid) for pid in workers), "a worker left behind")
    assert not list(tmp_path.glob("wbmigrate-plan-*"))  # the workers' file, removed


def test_the_workers_of_a_killed_plan_end_with_it(live, tmp_path):
    """kill -9 of a pooled plan (mid-way, as above): its workers end with it, never left
    waiting on a pipe no one writes any more."""
    gate = threading.Event()
    plan = start_plan(live, tmp_path, gate, stdout=subprocess.DEVNULL)
    try:
        workers = until(lambda: len(children(plan.pid)) >= 2 and children(plan.pid), "no pool")
        plan.kill()
        plan.wait(60)
    finally:
        gate.set()
    until(lambda: not any(running(pid) for pid in workers), "a worker left behind")
