"""The option groups commands share: the migration options (which mapping, steps, mode) and
those of the commands that talk to W&B, defined without loading the live side: a command that
may work on files alone (`plan DIR`) starts without `requests`."""

from __future__ import annotations

import functools
import io
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

import click

from wbmigrate.cli.base import QUIET, UserError, warn
from wbmigrate.engine.history import DEFAULT_RUNS
from wbmigrate.engine.model import Mode, Options
from wbmigrate.mapping import Migration
from wbmigrate.mapping.load import find_mapping, is_bundled
from wbmigrate.safe_write import read_file

DEFAULT_MAPPING = "prime-rl"  # the bundled mapping --mapping names unless told otherwise

Command = TypeVar("Command", bound=Callable[..., Any])


def stacked(*options: Callable[[Any], Any]) -> Callable[[Command], Command]:
    """One decorator that adds `options` to a command, in the order given."""

    def add(command: Command) -> Command:
        for option in reversed(options):
            command = option(command)
        return command

    return add


def flag(*declarations: str) -> Callable[[Command], Command]:
    """An on/off option: its names, then its help."""
    *names, text = declarations
    return click.option(*names, is_flag=True, help=text)


def quiet_flag(text: str) -> Callable[[Command], Command]:
    """`-q`, as ruff's: it sets `QUIET` for the command's run, as the command's options are read."""
    return click.option(
        "--quiet",
        "-q",
        is_flag=True,
        expose_value=False,
        callback=lambda ctx, param, value: QUIET.set() if value else None,
        help=text,
    )


class KeysFile(click.File):
    """`--project-keys FILE`, read as wbmigrate reads every file (`safe_write.read_file`): a
    FIFO or device is refused, never waited on, and text that is not UTF-8 is one line, not a
    traceback. `-` (stdin) and a folder are click's, as before."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == "-" or Path(value).is_dir():
            return super().convert(value, param, ctx)
        try:
            return io.StringIO(read_file(Path(value))[0].decode("utf-8"))
        except OSError as exc:
            self.fail(f"'{click.format_filename(value)}': {exc.strerror}", param, ctx)
        except UnicodeDecodeError:
            self.fail(f"'{click.format_filename(value)}': not UTF-8 text", param, ctx)


migration_options = stacked(
    click.option(
        "--mapping",
        "mapping_ref",
        default=DEFAULT_MAPPING,
        envvar="WBMIGRATE_MAPPING",
        metavar="ID|PATH",
        help="A bundled mapping id or a mapping file.",
    ),
    click.option(
        "--from",
        "start",
        metavar="VERSION",
        help="First mapping step to apply (default: the oldest).",
    ),
    click.option(
        "--to", metavar="VERSION", help="Last mapping step to apply (default: the latest)."
    ),
    click.option(
        "--mode",
        type=click.Choice([mode.value for mode in Mode]),
        default="dual",
        envvar="WBMIGRATE_MODE",
        help="dual: keep each old key and add the new one beside it, so runs from "
        "before the rename stay visible; replace: swap old keys for new ones.",
    ),
    flag(
        "--rewrite-text",
        "Also rewrite whole metric names in markdown, titles and descriptions "
        "(default: report them for review).",
    ),
    flag("--no-annotate", "Do not add the migration-boundary note to migrated views."),
    click.option(
        "--project-keys",
        type=KeysFile("r", encoding="utf-8"),
        metavar="FILE",
        help="Known metric keys of the project, one per line: sharpens the analysis "
        "of metric regexes.",
    ),
)  # every migrating command's: which mapping, which steps, which mode


def migration_setup(
    mapping_ref: str,
    start: str | None,
    to: str | None,
    mode: str,
    rewrite_text: bool,
    no_annotate: bool,
    project_keys: Any,
) -> tuple[Migration, Options]:
    """The migration and options the migration options give."""
    mapping = find_mapping(mapping_ref)
    if not is_bundled(mapping):
        warn(mapping.warnings)
    keys = frozenset(line.strip() for line in project_keys or () if line.strip())
    options = Options(
        mode=Mode(mode), project_keys=keys, rewrite_text=rewrite_text, annotate=not no_annotate
    )
    return mapping.migration(start, to), options


DRAFTS = click.option(
    "--drafts",
    type=click.Choice(["migrate", "skip"]),
    default="migrate",
    help="Report drafts: migrate them too (a stale draft would undo the "
    "migration when published), or leave them.",
)

RUNS = click.option(
    "--runs",
    type=click.IntRange(0, 100_000),
    default=DEFAULT_RUNS,
    metavar="N",
    help="Read which keys the project's N newest runs logged (read-only; finished runs are "
    "cached): its own boundary in the plan and the note, and a warning where a panel or alert "
    "would show a key no run logged. 0: skip.",
)

_CONNECTION_OPTIONS = stacked(
    flag("--allow-http", "Send the API key over plain http to a host other than this machine."),
    click.option(
        "--timeout",
        type=click.FloatRange(1, 600),
        default=60,
        metavar="SECONDS",
        help="Give up on one try of a request after this long: connecting, sending and "
        "receiving the whole answer.",
    ),
    click.option(
        "--retries",
        type=click.IntRange(0, 20),
        default=8,
        help="Retries of one request on 429, 5xx and dropped connections (a connection "
        "refused or unanswered: two at most; a host not found: none).",
    ),
    click.option(
        "--max-wait",
        type=click.FloatRange(0, 3600),
        default=60,
        metavar="SECONDS",
        help="The longest wait before a retry that W&B may ask for (Retry-After); a longer "
        "one fails the request at once.",
    ),
    click.option(
        "--max-answer",
        type=click.IntRange(1),
        default=128,
        metavar="MB",
        help="The largest answer to one request that is read, decompressed; a larger one "
        "fails the request.",
    ),
    click.option(
        "--deadline",
        type=click.FloatRange(0, min_open=True),
        metavar="SECONDS",
        help="Stop the run with an error this long after it first connects (default: none).",
    ),
)


@dataclass(frozen=True)
class Connection:
    """How to reach W&B, as the connection options say."""

    allow_http: bool
    timeout: float
    retries: int
    max_wait: float  # the longest Retry-After obeyed
    max_answer: int  # MB: the largest answer read
    deadline: float | None  # seconds for the whole run, from the first connection


def connection_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options of commands that talk to W&B, handed to the command as `connection`."""

    @functools.wraps(command)
    def with_connection(*args: Any, **kw: Any) -> Any:
        connection = Connection(**{f.name: kw.pop(f.name) for f in fields(Connection)})
        return command(*args, connection=connection, **kw)

    return _CONNECTION_OPTIONS(with_connection)


FORMAT = click.option(
    "--format",
    "format_",
    type=click.Choice(["text", "json"]),
    default="text",
    help="json: the result as one document on stdout (schemas/live-result.schema.json); "
    "progress and status stay on stderr.",
)


ONLY = "wbmigrate.only"  # ctx.meta: the --only values, which `cli.project` turns into picks


def only_option(command: Command) -> Command:
    """`--only NAME|ID|URL` (repeatable): the command works on those objects of its one live
    project alone. Kept in the context for `cli.project`, so a command gains it by this one
    decorator; refused with files, which it would not narrow."""

    @functools.wraps(command)
    def with_only(*args: Any, only: tuple[str, ...], **kw: Any) -> Any:
        paths = [t for t in kw.get("targets", ()) if t and Path(t).exists()]
        if only and paths:
            raise UserError(f"--only picks objects of a live project, not of files ({paths[0]})")
        click.get_current_context().meta[ONLY] = only
        return command(*args, **kw)

    return click.option(
        "--only",
        multiple=True,
        metavar="NAME|ID|URL",
        help="Work on this report, workspace or automation alone (its exact title, its id, or "
        "its W&B URL; a report with its drafts); repeatable.",
    )(with_only)  # type: ignore[return-value]


live_options = stacked(DRAFTS, only_option, RUNS)  # which objects of a live project, which runs
