"""The `wbmigrate` command line: parse arguments, call the library, print, exit.

Library errors (WbmigrateError) become one-line `Error: ...` messages with exit code 2. Each
command lives in the module named below and is imported only when it runs.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import sys
import threading
from typing import NoReturn

import click

from wbmigrate import __version__
from wbmigrate.cli.base import CONTEXT, Group, examples

__all__ = ["cli", "main"]

COMMANDS = {
    "plan": "wbmigrate.cli.plan:plan",
    "show": "wbmigrate.cli.show:show",
    "apply": "wbmigrate.cli.live:apply",
    "rollback": "wbmigrate.cli.rollback:rollback",
    "verify": "wbmigrate.cli.verify:verify",
    "export": "wbmigrate.cli.export:export",
    "check": "wbmigrate.cli.check:check",
    "mappings": "wbmigrate.cli.mappings:mappings",
}


@click.group(
    cls=Group,
    lazy=COMMANDS,
    context_settings=CONTEXT,
    epilog=examples(
        "wbmigrate plan fixtures/demo-project",
        "wbmigrate plan my-team/my-project --out plan.json",
        "wbmigrate apply my-team/my-project --plan plan.json --yes",
        "wbmigrate mappings show prime-rl",
    ),
)
@click.version_option(__version__, "-V", "--version", prog_name="wbmigrate")
def cli() -> None:
    """Migrate W&B reports, workspaces and alerts when the metrics behind them are renamed.

    A versioned mapping file says which metrics and config keys were renamed or removed; the
    bundled `prime-rl` mapping covers prime-rl's off_policy/* -> staleness/* renames (PR #4253).

    Live projects are read with WANDB_API_KEY (or the ~/.netrc entry `wandb login` writes) from
    WANDB_BASE_URL (default https://api.wandb.ai).
    """


def main() -> None:
    # A parsed spec is a million small containers that live until its object is planned; with
    # the default threshold the cyclic collector walks them again and again (a tenth of a plan).
    # A larger first generation keeps cycles collected without those repeated walks.
    gc.set_threshold(100_000, 10, 10)
    try:
        cli(prog_name="wbmigrate")
    except SystemExit as done:
        leave(done)


def leave(done: SystemExit) -> NoReturn:
    """Exit without tearing the interpreter down object by object, which costs a short run a
    tenth of its time (as mypy's --fast-exit): the streams are flushed and the exit handlers
    run first. Only once the work is over: while a thread that is no daemon still runs,
    or when a stream cannot be flushed (a closed pipe), the exit is the normal one."""
    code = done.code
    others = [t for t in threading.enumerate() if t is not threading.current_thread()]
    if not isinstance(code, int | None) or any(not t.daemon for t in others):
        raise done
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        raise done from None
    atexit._run_exitfuncs()
    with contextlib.suppress(OSError, ValueError):  # what a handler printed
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code or 0)
