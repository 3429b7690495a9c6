"""What the commands on a live project share: the connection options, the project TARGET names,
what it held, and a progress bar."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import click

from wbmigrate.cli.base import UserError, status
from wbmigrate.live.apply import Outcome
from wbmigrate.live.client import Client
from wbmigrate.live.credentials import api_key_from, base_url_from, check_transport
from wbmigrate.live.project import Census, Project, parse_target
from wbmigrate.report import live as live_report

DRAFTS = click.option(
    "--drafts",
    type=click.Choice(["migrate", "skip"]),
    default="migrate",
    show_default=True,
    help="Report drafts: migrate them too (a stale draft would undo the "
    "migration when published), or leave them.",
)


_CONNECTION_OPTIONS = [
    click.option(
        "--allow-http",
        is_flag=True,
        help="Send the API key over plain http to a host other than this machine.",
    ),
    click.option(
        "--timeout",
        type=click.FloatRange(1, 600),
        default=60,
        show_default=True,
        metavar="SECONDS",
        help="Give up on one request after this long.",
    ),
    click.option(
        "--retries",
        type=click.IntRange(0, 20),
        default=8,
        show_default=True,
        help="Retries of one request on 429, 5xx and connection errors.",
    ),
]


@dataclass(frozen=True)
class Connection:
    """How to reach W&B, as the connection options say."""

    allow_http: bool
    timeout: float
    retries: int


def connection_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options of commands that talk to W&B, handed to the command as `connection`."""

    @functools.wraps(command)
    def with_connection(
        *args: Any, allow_http: bool, timeout: float, retries: int, **kw: Any
    ) -> Any:
        return command(*args, connection=Connection(allow_http, timeout, retries), **kw)

    for option in reversed(_CONNECTION_OPTIONS):
        with_connection = option(with_connection)
    return with_connection


def connect(connection: Connection) -> Client:
    """A client for the W&B host of the environment."""
    env = os.environ
    base_url = base_url_from(env)
    check_transport(base_url, connection.allow_http)
    api_key = api_key_from(base_url, env)
    return Client(base_url, api_key, timeout=connection.timeout, retries=connection.retries)


def live_target(target: str, files_too: bool = False) -> tuple[str, str]:
    """ENTITY and PROJECT of a live TARGET, or a one-line error."""
    live = parse_target(target)
    if live is None:
        also = "no such file or folder, and " if files_too else ""
        raise UserError(f"{target}: {also}not ENTITY/PROJECT")
    return live


def open_project(live: tuple[str, str], drafts: bool, connection: Connection) -> Project:
    """The live project, connected; its reading is announced on stderr."""
    project = Project(connect(connection), *live, drafts=drafts)
    status(f"Reading {project.target} from {project.client.base_url} ...")
    return project


def tell_found(census: Census, drafts: bool) -> None:
    """What the project held, once it has all been read."""
    status(live_report.census(census))
    if not drafts:
        status(
            "Warning: drafts are skipped; publishing a stale draft undoes its report's migration."
        )


@contextmanager
def progress(total: int, label: str) -> Iterator[Callable[[Outcome], None]]:
    """A progress bar on stderr when it is a terminal and the run is long enough to need one."""
    if total < 5 or not sys.stderr.isatty():
        yield lambda outcome: None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield lambda outcome: bar.update(1)
