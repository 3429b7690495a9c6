"""How `wbmigrate` ends (`wbmigrate.cli.leave`): once the work is over it exits at once, with
its exit code, all its output and the exit handlers run; while a thread that is no daemon
still runs, or when a stream cannot be flushed, the exit is Python's own."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
from helpers import REPO

from wbmigrate.cli import leave

DEMO = str(REPO / "fixtures/demo-project")


def wbmigrate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wbmigrate", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    "args",
    [
        ["plan", DEMO],
        ["plan", DEMO, "--format", "json"],
        ["check", DEMO, "--format", "sarif"],
        ["mappings", "list"],
        ["plan", "no/such/folder"],
    ],
    ids=["plan", "plan-json", "check-sarif", "ok", "usage-error"],
)
def test_a_process_exits_with_the_code_and_output_of_the_command(run, args):
    alone = run(*args)
    done = wbmigrate(*args)
    assert (done.returncode, done.stdout, done.stderr) == (
        alone.exit_code,
        alone.stdout,
        alone.stderr,
    )


def test_exit_handlers_run_and_what_they_print_is_kept(tmp_path):
    script = (
        "import atexit, sys\n"
        "from wbmigrate.cli import main\n"
        "atexit.register(lambda: print('handler ran', file=sys.stderr))\n"
        "sys.argv = ['wbmigrate', 'mappings', 'list']\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "prime-rl\n", "handler ran\n")


def test_a_thread_that_is_no_daemon_gets_the_normal_exit():
    release = threading.Event()
    thread = threading.Thread(target=release.wait, args=(5,))
    thread.start()
    done = SystemExit(3)
    try:
        with pytest.raises(SystemExit) as left:
            leave(done)
    finally:
        release.set()
        thread.join()
    assert left.value is done


@pytest.fixture
def alone(monkeypatch):
    """No thread but this one, as when a command is over (a test runner may have others)."""
    monkeypatch.setattr(threading, "enumerate", lambda: [threading.current_thread()])


@pytest.mark.parametrize("code", ["Error: as text", ("a", "tuple")])
def test_an_exit_that_is_no_number_gets_the_normal_exit(alone, code):
    done = SystemExit(code)
    with pytest.raises(SystemExit) as left:
        leave(done)
    assert left.value is done


def test_a_stream_that_cannot_be_flushed_gets_the_normal_exit(alone, monkeypatch):
    class Closed:
        def flush(self) -> None:
            raise ValueError("I/O operation on closed file")

    monkeypatch.setattr(sys, "stdout", Closed())
    done = SystemExit(0)
    with pytest.raises(SystemExit) as left:
        leave(done)
    assert left.value is done
