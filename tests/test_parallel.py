"""Work on every core (`wbmigrate.parallel`): the results of one process, in the same order;
what a stopped worker left, or everything when no worker starts, is done here; `plan DIR` on
every core prints the plan of one process; Ctrl-C stops the workers without a traceback."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import FIXTURES, MIGRATION, REPO, running

from wbmigrate import files, parallel
from wbmigrate.engine.model import Options
from wbmigrate.plan_json import object_entry

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux"),
    pytest.mark.usefixtures("forking"),
]


@pytest.fixture
def forking(monkeypatch):
    """Workers even when an earlier test left a thread behind (an idle server's: a worker
    needs no lock it could hold)."""
    monkeypatch.setattr(parallel.threading, "active_count", lambda: 1)


def slowly(item: int) -> tuple[int, int]:
    time.sleep(0.002)  # (so that the workers get a share)
    return item, os.getpid()


def test_results_come_back_in_order_from_the_workers():
    results = parallel.each(range(300), slowly, 3)
    assert [item for item, _ in results] == list(range(300))
    assert len({pid for _, pid in results}) > 1  # done here and elsewhere


def test_what_a_stopped_worker_left_is_done_here():
    here = os.getpid()
    stopped = multiprocessing.get_context("fork").Value("i", 0)

    def work(item: int) -> tuple[int, int]:
        if item == 5 and os.getpid() != here:
            stopped.value = 1
            os._exit(1)  # as when the system stops a worker
        return slowly(item)

    results = parallel.each(range(300), work, 2)
    assert stopped.value == 1
    assert [item for item, _ in results] == list(range(300))
    assert {pid for _, pid in results} == {here}  # the worker's are lost


def test_without_a_worker_everything_is_done_here(monkeypatch):
    def refuse(*args):
        raise OSError(11, "Resource temporarily unavailable")  # fork: too many processes

    monkeypatch.setattr(parallel.ProcessPoolExecutor, "submit", refuse)
    assert parallel.each(range(100), slowly, 2) == [(i, os.getpid()) for i in range(100)]


def test_an_answer_that_cannot_come_back_is_done_here():
    here = os.getpid()
    sent = multiprocessing.get_context("fork").Value("i", 0)

    def work(item: int) -> object:
        if item == 5 and os.getpid() != here:
            sent.value = 1
            return lambda: item  # a function does not pickle
        return slowly(item)[0]

    assert parallel.each(range(300), work, 2) == list(range(300))
    assert sent.value == 1


# --- plan DIR --------------------------------------------------------------------------------


def entries(folder: Path) -> list[dict]:
    return [object_entry(p) for p in files.plan_files(folder, (), MIGRATION, Options())]


def serial(folder: Path) -> list[dict]:
    """The plan made file by file in this process."""
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(files, "_processes", lambda paths: 1)
        return entries(folder)


def test_workers_plan_what_one_process_plans(monkeypatch):
    folder = FIXTURES / "demo-project"
    alone = serial(folder)
    monkeypatch.setattr(files, "_processes", lambda paths: 2)
    monkeypatch.setattr(parallel, "CHUNK", 1)
    forked = []
    real = parallel.multiprocessing.get_context
    spy = lambda method: forked.append(method) or real(method)  # noqa: E731
    monkeypatch.setattr(parallel.multiprocessing, "get_context", spy)
    assert entries(folder) == alone
    assert forked == ["fork"]
    assert len(alone) >= 4


@pytest.fixture(scope="module")
def big_folder(tmp_path_factory) -> Path:
    """Over PARALLEL_BYTES of reports (the demo's, each block repeated), so `wbmigrate plan`
    starts its workers."""
    folder = tmp_path_factory.mktemp("big")
    spec = json.loads((FIXTURES / "demo-project/reports/async-health.json").read_text())
    for i in range(24):
        big = {**spec, "blocks": spec["blocks"] * (60 + i)}
        (folder / f"report{i:02d}.json").write_text(json.dumps(big, indent=2))
    assert sum(p.stat().st_size for p in folder.iterdir()) > 2 * files.PARALLEL_BYTES
    return folder


def test_the_command_on_every_core_prints_the_plan_of_one_process(big_folder):
    done = subprocess.run(
        [sys.executable, "-m", "wbmigrate", "plan", str(big_folder), "--format", "json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["objects"] == serial(big_folder)


def test_ctrl_c_stops_the_workers_without_a_traceback(big_folder):
    process = subprocess.Popen(
        [sys.executable, "-m", "wbmigrate", "plan", str(big_folder)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
    deadline = time.monotonic() + 30
    while not children.read_text().split() and time.monotonic() < deadline:
        time.sleep(0.005)  # until the workers are forked
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert b"Traceback" not in err
    assert b"Interrupted" in err


def _children(pid: int) -> list[int]:
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as stat:
                if int(stat.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
        except OSError:  # it ended meanwhile
            continue
    return found


@pytest.mark.skipif(parallel.cores() < 2, reason="workers are forked on more than one core")
def test_the_workers_of_a_killed_check_end_with_it(tmp_path):
    """A worker blocked on a pipe its killed parent no longer reads is ended by the kernel."""
    spec = {"metrics": ["off_policy/mean", "train/loss"] * 200}
    for i in range(3000):
        (tmp_path / f"f{i}.json").write_text(json.dumps(spec))
    check = subprocess.Popen(
        [sys.executable, "-m", "wbmigrate", "check", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=REPO,
    )
    try:
        deadline = time.monotonic() + 30
        while not (workers := _children(check.pid)) and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        check.kill()
        check.wait()
    assert workers, "no worker was forked"
    deadline = time.monotonic() + 10
    while any(map(running, workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(running, workers))
