"""The `wbmigrate` command line: parse arguments, call the library, print, exit.

Library errors (WbmigrateError) become one-line `Error: ...` messages with exit code 2.
"""

from __future__ import annotations

from wbmigrate.cli import check, mappings, migrate  # noqa: F401  (they register commands)
from wbmigrate.cli.base import cli

__all__ = ["cli", "main"]


def main() -> None:
    cli(prog_name="wbmigrate")
