"""Work on every core (`wbmigrate.parallel`): the results of one process, in the same order;
what a stopped worker left, or everything when no worker starts, is done here; the workers of
a killed check end with it."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import TypeVar

import pytest
from helpers import REPO, running, until

from wbmigrate import parallel

R = TypeVar("R")

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux"),
    pytest.mark.usefixtures("forking"),
]


@pytest.fixture
def forking(monkeypatch):
    """Workers even when an earlier test left a thread behind (an idle server's: a worker
    needs no lock it could hold)."""
    monkeypatch.setattr(parallel.threading, "active_count", lambda: 1)


def where(item: int) -> tuple[int, int]:
    return item, os.getpid()


def shared(work: Callable[[int], R]) -> Callable[[int], R]:
    """`work`, this process's share of it held (bounded) until a worker has done an item: the
    workers surely get a share, however fast this process is."""
    here, elsewhere = os.getpid(), multiprocessing.get_context("fork").Event()

    def work_shared(item: int) -> R:
        if os.getpid() != here:
            elsewhere.set()
        else:
            elsewhere.wait(30)
        return work(item)

    return work_shared


def test_results_come_back_in_order_from_the_workers():
    results = parallel.each(range(300), shared(where), 3)
    assert [item for item, _ in results] == list(range(300))
    assert len({pid for _, pid in results}) > 1  # done here and elsewhere


def test_what_a_stopped_worker_left_is_done_here():
    here = os.getpid()
    stopped = multiprocessing.get_context("fork").Value("i", 0)

    def work(item: int) -> tuple[int, int]:
        if item == 5 and os.getpid() != here:
            stopped.value = 1
            os._exit(1)  # as when the system stops a worker
        return where(item)

    results = parallel.each(range(300), shared(work), 2)
    assert stopped.value == 1
    assert [item for item, _ in results] == list(range(300))
    assert {pid for _, pid in results} == {here}  # the worker's are lost


def test_without_a_worker_everything_is_done_here(monkeypatch):
    def refuse(*args):
        raise OSError(11, "Resource temporarily unavailable")  # fork: too many processes

    monkeypatch.setattr(parallel.ProcessPoolExecutor, "submit", refuse)
    assert parallel.each(range(100), where, 2) == [(i, os.getpid()) for i in range(100)]


def test_an_answer_that_cannot_come_back_is_done_here():
    here = os.getpid()
    sent = multiprocessing.get_context("fork").Value("i", 0)

    def work(item: int) -> object:
        if item == 5 and os.getpid() != here:
            sent.value = 1
            return lambda: item  # a function does not pickle
        return item

    assert parallel.each(range(300), shared(work), 2) == list(range(300))
    assert sent.value == 1


@pytest.fixture(scope="module")
def many_files(tmp_path_factory):
    """3,000 specs holding an old name: a check long enough to be stopped midway (only read)."""
    folder = tmp_path_factory.mktemp("many")
    spec = json.dumps({"metrics": ["off_policy/mean", "train/loss"] * 200})
    for i in range(3000):
        (folder / f"f{i}.json").write_text(spec)
    return folder


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
def test_ctrl_c_stops_the_workers_without_a_traceback(many_files):
    process = subprocess.Popen(
        [sys.executable, "-m", "wbmigrate", "check", str(many_files)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    workers = until(lambda: _children(process.pid), "no worker was forked")
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode != 0, err  # click's "Aborted!" (exit 1), as before the pool
    assert b"Traceback" not in err
    until(lambda: not any(map(running, workers)), "a worker outlived its check")


@pytest.mark.skipif(parallel.cores() < 2, reason="workers are forked on more than one core")
def test_the_workers_of_a_killed_check_end_with_it(many_files):
    """A worker blocked on a pipe its killed parent no longer reads is ended by the kernel."""
    check = subprocess.Popen(
        [sys.executable, "-m", "wbmigrate", "check", str(many_files)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=REPO,
    )
    try:
        workers = until(lambda: _children(check.pid), "no worker was forked")
    finally:
        check.kill()
        check.wait()
    until(lambda: not any(map(running, workers)), "a worker outlived its check")
