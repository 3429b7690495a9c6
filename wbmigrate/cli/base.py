"""What every command shares: the group class, error handling, status, questions and exit
codes (the option groups are in `cli.options`)."""

from __future__ import annotations

import difflib
import functools
import importlib
import itertools
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

import click

from wbmigrate.engine.model import Options
from wbmigrate.errors import Level, WbmigrateError
from wbmigrate.exit_codes import ExitCode, exit_code
from wbmigrate.mapping import Migration
from wbmigrate.plan import Planned
from wbmigrate.redact import forget, redact
from wbmigrate.report import plan as plan_report
from wbmigrate.report.words import colours, terminal_safe

DETAILED = "detailed_exitcode"  # the option's parameter, and the key of ctx.meta that says it


class Shown:
    """stdout or stderr while a command runs: what a terminal would act on escaped
    (`words.terminal_safe`), then secrets redacted (`redact`), whoever wrote it."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        safe = terminal_safe(text) if isinstance(text, str) else text
        self._stream.write(redact(safe) if isinstance(safe, str) else safe)
        return len(safe)

    def unescaped(self) -> Any:
        return self._stream

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def drawn_on() -> Any:
    """stderr for what wbmigrate draws itself at a terminal, the progress bar (its label is
    wbmigrate's own words): as the terminal gets it, since its carriage returns and escapes
    would be printed escaped through `Shown`."""
    return sys.stderr.unescaped() if isinstance(sys.stderr, Shown) else sys.stderr


class UserError(click.ClickException):
    """Shown as `Error: <line>` for each line of the message, exit code 2."""

    exit_code = ExitCode.ERROR

    def show(self, file: Any = None) -> None:
        message = terminal_safe(redact(self.format_message()))  # shown after the command ran
        for line in message.splitlines():
            click.echo(f"Error: {line}", err=True)


class Group(click.Group):
    """A group that turns library errors into one-line messages, never a traceback, and that
    imports a command's module only when that command runs (`lazy`: name -> "module:object"),
    so `check` starts without loading the live side."""

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy or {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy and name not in self.commands:
            module, _, attribute = self.lazy[name].partition(":")
            self.add_command(getattr(importlib.import_module(module), attribute), name)
        return super().get_command(ctx, name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """A mistyped command name gets the closest one, as click suggests among the commands
        it has loaded (which, loaded lazily, are none yet), and on every click version."""
        name = args[0]
        if not name.startswith("-") and self.get_command(ctx, name) is None:
            close = difflib.get_close_matches(name, self.list_commands(ctx), n=1)
            if close and not ctx.resilient_parsing:
                ctx.fail(f"No such command {name!r}. Did you mean {close[0]!r}?")
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        if ctx.parent is not None:
            return self._invoke(ctx)
        # The root group: stdout and stderr pass through the redactor and `terminal_safe`.
        forget()
        QUIET.clear()
        streams = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = Shown(sys.stdout), Shown(sys.stderr)
        try:
            with colours(ctx), _detailed_errors(ctx):
                return self._invoke(ctx)
        finally:
            sys.stdout, sys.stderr = streams

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except WbmigrateError as exc:  # a MappingError says each of its problems on a line
            raise UserError(str(exc)) from None


class DetailedCommand(click.Command):
    """A command with `--detailed-exitcode`, under which every error exits 1. The flag is
    looked for before the arguments are parsed, so that a usage error exits 1 too."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta[DETAILED] = "--detailed-exitcode" in args
        rest = super().parse_args(ctx, args)
        ctx.meta[DETAILED] = bool(ctx.params.get(DETAILED))
        return rest


@contextmanager
def _detailed_errors(ctx: click.Context) -> Iterator[None]:
    """An error (a one-line `Error:`, a usage error) of a command run with --detailed-exitcode
    is shown as always, and exits 1 instead of 2."""
    try:
        yield
    except click.ClickException as exc:
        if not ctx.meta.get(DETAILED):
            raise
        exc.show()
        finish(error=True)


def examples(*lines: str) -> str:
    """An epilog of examples that click prints as written (\b stops its rewrapping)."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


def print_plan(
    format_: str, migration: Migration, options: Options, verbose: bool, planned: Iterable[Planned]
) -> None:
    """Stream `plan`'s report (of files or of a live project) to stdout, from its first object
    on: an error reading the target (an unknown project, a refused key) then comes before any
    output. Under -q, a text report is its objects alone (documents stay whole)."""
    if format_ == "json":
        chunks = plan_report.json_chunks(migration, options, planned)
    else:
        render = plan_report.text_chunks if format_ == "text" else plan_report.markdown_chunks
        chunks = render(migration, options, planned, verbose)
        if format_ == "text" and QUIET.is_set():  # as ruff's -q prints the diagnostics alone:
            # the pieces without the first (heading, census, legend) and the last (the summary)
            chunks = (piece for piece, _ in itertools.pairwise(itertools.islice(chunks, 1, None)))
    pieces = list(itertools.islice(chunks, 2))  # the heading, then the first object's piece
    for piece in itertools.chain(pieces, chunks):
        click.echo(piece, nl=False)


def warn(problems: tuple[Any, ...]) -> None:
    for problem in problems:
        if problem.level is Level.WARNING:
            click.echo(f"Warning: {problem}", err=True)


def finish(
    failed: bool = False, changes: bool = False, error: bool = False, interrupted: bool = False
) -> None:
    """The one place a command's run ends with its exit code (`exit_codes.exit_code`, which
    says which outcome wins); a run that exits 0 returns."""
    detailed = bool(click.get_current_context().meta.get(DETAILED))
    code = exit_code(failed, changes, error, interrupted, detailed)
    if code:
        raise SystemExit(code)


# -q (as ruff's), set for the command's run: `status` shows warnings only (errors never go
# through it). An event, not the click context: status lines come from worker threads too.
QUIET = threading.Event()


def status(message: str) -> None:
    """Progress and status go to stderr; stdout is for the report. Under -q, only warnings."""
    if not QUIET.is_set() or message.startswith("Warning:"):
        click.echo(message, err=True)


def asks(yes: bool) -> bool:
    """Whether a write will be asked about: no --yes, and a terminal to ask at."""
    return not yes and sys.stdin.isatty() and sys.stderr.isatty()


def confirm_or_refuse(question: str, yes: bool, shown: Iterable[str] = ()) -> None:
    """Go on with --yes; at a terminal, show `shown` (what will be written: rendered only
    now, when there is someone to read it) on stderr beside the question, and go on after a
    yes; refuse (exit 2) without a terminal."""
    if yes:
        return
    if not asks(yes):
        raise UserError("refusing to write without --yes (no terminal to ask); nothing written")
    for piece in shown:
        click.echo(piece, nl=False, err=True)
    if not click.confirm(question, default=False, err=True):
        status("Cancelled; nothing written.")
        finish(failed=True)


def interruptible(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A Ctrl-C before the writes begin ends the command with one line and exit 130; during
    them, `run_all` stops the batch and the command reports what was done."""

    def wrap(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return command(*args, **kwargs)
            except KeyboardInterrupt:
                click.echo(f"Interrupted; {what}.", err=True)  # said under -q too
                finish(interrupted=True)

        return run

    return wrap
