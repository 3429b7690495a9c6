"""The `wbmigrate` command line: parse arguments, call the library, print, exit.

Library errors (WbmigrateError) become one-line `Error: ...` messages with exit code 2. Each
command lives in the module named below and is imported only when it runs.
"""

from __future__ import annotations

import click

from wbmigrate import __version__
from wbmigrate.cli.base import Group, examples
from wbmigrate.live import DEFAULT_BASE_URL

__all__ = ["cli", "main"]

COMMANDS = {
    "plan": "wbmigrate.cli.plan:plan",
    "show": "wbmigrate.cli.show:show",
    "apply": "wbmigrate.cli.apply:apply",
    "rollback": "wbmigrate.cli.rollback:rollback",
    "verify": "wbmigrate.cli.verify:verify",
    "export": "wbmigrate.cli.export:export",
    "check": "wbmigrate.cli.check:check",
    "mappings": "wbmigrate.cli.mappings:mappings",
}


@click.group(
    cls=Group,
    lazy=COMMANDS,
    # every command and group below inherits these from the root (show_default: an option
    # with a default shows it, as each used to say alone)
    context_settings={
        "help_option_names": ["-h", "--help"],
        "max_content_width": 100,
        "show_default": True,
    },
    epilog=examples(
        "wbmigrate plan fixtures/demo-project",
        "wbmigrate plan my-team/my-project --out plan.json",
        "wbmigrate apply my-team/my-project --plan plan.json --yes",
        "wbmigrate mappings show prime-rl",
    ),
)
@click.version_option(__version__, "-V", "--version", prog_name="wbmigrate")
def cli() -> None:
    pass


# The default host is the one the code connects to (wandb's own default), never a second copy.
cli.help = f"""Migrate W&B reports, workspaces and alerts when the metrics behind them are renamed.

    A versioned mapping file says which metrics and config keys were renamed or removed; the
    bundled `prime-rl` mapping covers prime-rl's off_policy/* -> staleness/* renames (PR #4253).

    Live projects are read with WANDB_API_KEY (or the ~/.netrc entry `wandb login` writes) from
    WANDB_BASE_URL, else the host `wandb login` saved, else wandb's default {DEFAULT_BASE_URL}.
    """


def main() -> None:
    cli(prog_name="wbmigrate")
