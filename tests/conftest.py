"""Shared paths and a CLI runner that keeps stdout and stderr apart."""

from __future__ import annotations

import pytest
from click.testing import CliRunner, Result

from wbmigrate.cli import cli


@pytest.fixture
def run():
    """Run `wbmigrate ARGS...` in-process; returns click's Result (stdout, stderr, exit_code)."""

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(cli, list(args), prog_name="wbmigrate", catch_exceptions=False)

    return invoke
