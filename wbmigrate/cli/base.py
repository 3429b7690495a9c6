"""What every command shares: the group class, error handling, status, questions and exit
codes (the option groups are in `cli.options`)."""

from __future__ import annotations

import functools
import importlib
import itertools
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from wbmigrate.engine.model import Options
from wbmigrate.errors import WbmigrateError
from wbmigrate.exit_codes import ExitCode, exit_code
from wbmigrate.mapping import Migration, Severity
from wbmigrate.plan import Planned
from wbmigrate.redact import RedactingStream, forget, redact
from wbmigrate.report import plan as plan_report
from wbmigrate.report.words import colours, terminal_safe

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
DETAILED = "detailed_exitcode"  # the option's parameter, and the key of ctx.meta that says it


class Shown(RedactingStream):
    """stdout or stderr while a command runs: secrets redacted, then what a terminal would act
    on escaped (`words.terminal_safe`), whoever wrote it."""

    def write(self, text: str) -> int:
        return super().write(terminal_safe(text) if isinstance(text, str) else text)


@contextmanager
def redacted_output() -> Iterator[None]:
    """stdout and stderr pass through the redactor and `terminal_safe` while a command runs."""
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Shown(sys.stdout), Shown(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = streams


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

    def invoke(self, ctx: click.Context) -> Any:
        if ctx.parent is None:  # the root group: secrets are kept out of stdout and stderr
            forget()
            with redacted_output(), colours(ctx), _detailed_errors(ctx):
                return self._invoke(ctx)
        return self._invoke(ctx)

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
    output."""
    if format_ == "json":
        chunks = plan_report.json_chunks(migration, options, planned)
    else:
        render = plan_report.text_chunks if format_ == "text" else plan_report.markdown_chunks
        chunks = render(migration, options, planned, verbose)
    pieces = list(itertools.islice(chunks, 2))  # the heading, then the first object's piece
    for piece in itertools.chain(pieces, chunks):
        click.echo(piece, nl=False)


def warn(problems: tuple[Any, ...]) -> None:
    for problem in problems:
        if problem.severity is Severity.WARNING:
            click.echo(f"Warning: {problem}", err=True)


def finish(
    failed: bool = False, changes: bool = False, error: bool = False, interrupted: bool = False
) -> None:
    """The one place a command's run ends with its exit code (`exit_codes.exit_code`, which
    says which outcome wins); a run that exits 0 returns."""
    ctx = click.get_current_context(silent=True)
    detailed = bool(ctx and ctx.meta.get(DETAILED))
    code = exit_code(failed, changes, error, interrupted, detailed)
    if code:
        raise SystemExit(code)


def status(message: str) -> None:
    """Progress and status go to stderr; stdout is for the report."""
    click.echo(message, err=True)


def confirm_or_refuse(question: str, yes: bool) -> None:
    """Go on with --yes, or after a yes at a terminal; refuse (exit 2) without a terminal."""
    if yes:
        return
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise UserError("refusing to write without --yes (no terminal to ask); nothing written")
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
                status(f"Interrupted; {what}.")
                raise SystemExit(exit_code(interrupted=True)) from None

        return run

    return wrap
