"""`plan DIR` on every core: the same plan, in the same order, as planning file by file; a
worker's answer that cannot come back, and Ctrl-C, stop nothing and print no traceback."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import FIXTURES, MIGRATION, REPO

from benchmarks.data import report_texts
from wbmigrate import parallel
from wbmigrate.engine.model import Options
from wbmigrate.files import spec_paths
from wbmigrate.plan import object_entry

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux")


@pytest.fixture
def pooled(monkeypatch):
    """Workers for any number of files, also while the test runner has threads."""
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "CHUNK", 1)
    monkeypatch.setattr(parallel.threading, "active_count", lambda: 1)
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda _: {0, 1})


def entries(folder: Path) -> list[dict]:
    planned = parallel.plan_paths(spec_paths(folder), False, MIGRATION, Options())
    return [object_entry(p) for p in planned]


def serial(folder: Path) -> list[dict]:
    """The plan made file by file in this process."""
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(parallel, "_workers", lambda paths: 1)
        return entries(folder)


def test_workers_plan_what_one_process_plans(pooled, monkeypatch):
    folder = FIXTURES / "demo-project"
    alone = serial(folder)
    forked = []
    real = parallel.multiprocessing.get_context
    monkeypatch.setattr(
        parallel.multiprocessing,
        "get_context",
        lambda method: forked.append(method) or real(method),
    )
    assert entries(folder) == alone
    assert forked == ["fork"]
    assert len(alone) >= 4


def test_an_answer_that_cannot_come_back_is_planned_here(pooled, monkeypatch, tmp_path):
    for i, text in enumerate(report_texts(6, seed=5, low=2_000, high=5_000)):
        (tmp_path / f"r{i}.json").write_text(text)
    expected = serial(tmp_path)
    real = parallel._slim

    def unpicklable(planned):  # runs in the worker, which was forked after this patch
        if planned.source.name == "r2":
            return lambda: planned  # a function does not pickle
        return real(planned)

    monkeypatch.setattr(parallel, "_slim", unpicklable)
    assert entries(tmp_path) == expected


@pytest.fixture(scope="module")
def big_folder(tmp_path_factory) -> Path:
    """Over MIN_BYTES of reports, so `wbmigrate plan` starts its workers."""
    folder = tmp_path_factory.mktemp("big")
    texts = report_texts(48, seed=7, low=200_000, high=400_000)
    assert sum(map(len, texts)) > parallel.MIN_BYTES
    for i, text in enumerate(texts):
        (folder / f"report{i:02d}.json").write_text(text)
    return folder


def test_the_command_on_every_core_prints_the_plan_of_one_process(big_folder):
    folder = big_folder
    done = subprocess.run(
        [sys.executable, "-m", "wbmigrate", "plan", str(folder), "--format", "json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["objects"] == serial(folder)


def test_ctrl_c_stops_the_workers_without_a_traceback(big_folder):
    process = subprocess.Popen(
        [sys.executable, "-m", "wbmigrate", "plan", str(big_folder)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    process.stdout.readline()  # the first object planned: the workers are running
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)  # bytes: output may stop inside a character
    assert process.returncode == 130
    assert b"Traceback" not in err
    assert b"Interrupted" in err
