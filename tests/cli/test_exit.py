"""How `wbmigrate` ends: with its exit code, all its output and the exit handlers run."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import REPO

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
