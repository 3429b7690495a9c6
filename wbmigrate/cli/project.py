"""What the commands on a live project share: connecting, the project TARGET names, what it
held, and a progress bar (the options themselves are in `cli.options`)."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import click

from wbmigrate.cli.base import QUIET, UserError, drawn_on, status
from wbmigrate.cli.options import ONLY, Connection
from wbmigrate.live.census import cache_folder
from wbmigrate.live.client import Client
from wbmigrate.live.credentials import Host, check_transport, credentials, find_host
from wbmigrate.live.org import resolve, url_target
from wbmigrate.live.project import (
    Counts,
    Pick,
    Project,
    Selector,
    Walking,
    meanwhile,
    selector,
    with_history,
)
from wbmigrate.redact import printable, register
from wbmigrate.report import live as live_report

URL = ("https://", "http://")
PICKS = "wbmigrate.picks"  # ctx.meta: what `--only` and URL TARGETs picked

if TYPE_CHECKING:
    from wbmigrate.engine.model import Options
    from wbmigrate.live.outcomes import Outcome
    from wbmigrate.mapping import Migration


def connect(connection: Connection) -> Client:
    """A client for the host `wandb login` chose, with its key; the key is redacted from every
    line printed and file written from now on. It is closed when the command ends, however it
    ends: a listing or key census still running then sends and reports nothing more."""
    found = credentials(os.environ, Path.cwd())
    register(found.api_key)
    check_transport(found.host, connection.allow_http)
    client = Client(
        found.host.url,
        found.api_key,
        timeout=connection.timeout,
        retries=connection.retries,
        max_wait=connection.max_wait,
        max_answer=connection.max_answer << 20,
        deadline=connection.deadline,
        on_retry=retry_line,
        key_source=found.key_source,
    )
    click.get_current_context().call_on_close(client.close)
    return client


def live_targets(targets: tuple[str, ...], files_too: bool = False) -> list[Selector]:
    """What live TARGETs name: `ENTITY/PROJECT`s, `ENTITY` (every project the key can see) and
    `ENTITY/GLOB`s, each also as `wandb://...` or a W&B URL (a report's or saved workspace's
    picks that object, as `--only` does); a bare name is a project of WANDB_ENTITY when that
    is set (and differs), else an entity. None at all takes WANDB_ENTITY and WANDB_PROJECT.
    `files_too`: the command also takes a folder or file (one given alone does not exist,
    then). Else one line. The picks, all of one project, are kept for `open_project`."""
    env = os.environ
    context = click.get_current_context()
    only: tuple[str, ...] = context.meta.get(ONLY, ())
    urls = any(text.startswith(URL) for text in (*targets, *only))
    host = find_host(env, Path.cwd()) if urls else None  # what a URL's host must go with
    if targets in ((), ("",)):
        if not (env.get("WANDB_ENTITY") and env.get("WANDB_PROJECT")):
            raise UserError("no TARGET: give ENTITY/PROJECT, or set WANDB_ENTITY and WANDB_PROJECT")
        found: list[tuple[Selector, Pick | None]] = [
            (Selector(env["WANDB_ENTITY"], env["WANDB_PROJECT"]), None)
        ]
    else:
        found = [_selector(target, len(targets) == 1, files_too, host) for target in targets]
    selectors = [chosen for chosen, _ in found]
    picks = [pick for _, pick in found if pick]
    if not (picks or only):
        return selectors
    first = selectors[0]
    if first.is_pattern or any(s != first for s in selectors):
        raise UserError("--only and the URL of a report or workspace pick objects of one project")
    if context.params.get("plan_path"):  # its objects not picked would count as gone
        raise UserError("--only and --plan: a saved plan names its objects (see `plan --only`)")
    picks += [_only(text, host, first) for text in only]
    context.meta[PICKS] = tuple(picks)
    return [first]


def _selector(
    target: str, alone: bool, files_too: bool, host: Host | None
) -> tuple[Selector, Pick | None]:
    """The projects a TARGET names, and the object it picks (a report's or saved workspace's
    URL)."""
    if target.startswith(URL):
        assert host is not None
        return url_target(target, host)
    shown = printable(target)
    path_like = target.startswith(("./", "../", "/", "~")) or (
        target.endswith("/") and not target.startswith("wandb://")
    )  # a folder, though mistyped: never an entity of W&B
    if alone and files_too and path_like and not Path(target).exists():
        what = "folder" if target.endswith("/") else "file or folder"
        raise UserError(f"{shown}: no such {what}")
    if path_like or Path(target).exists():
        rest = "live commands take ENTITY/PROJECT" if alone else "give one alone, or projects only"
        raise UserError(f"{shown}: this is a folder or file; {rest}")
    entity = os.environ.get("WANDB_ENTITY")
    bare = "/" not in target.strip("/") and entity and target.strip("/") != entity
    found = selector(f"{entity}/{target}" if bare else target)
    if found is None:
        also = "no such file or folder, and " if alone and files_too else ""
        what = "ENTITY/PROJECT" if alone else "ENTITY, ENTITY/PROJECT or ENTITY/GLOB"
        raise UserError(f"{shown}: {also}not {what}")
    return found, None


def _only(text: str, host: Host | None, project: Selector) -> Pick:
    """What `--only TEXT` picks in `project`: an object by its title or id, or by its URL
    (which must be of that project)."""
    if not text.startswith(URL):
        return Pick(f"--only {text!r}", text)
    assert host is not None
    of, pick = url_target(text, host)
    if pick is None:
        raise UserError(f"--only {printable(text)}: not the URL of a report or saved workspace")
    if of != project:
        raise UserError(f"--only {printable(text)} is of {of}, not {project}")
    return pick


def one_project(selectors: list[Selector]) -> tuple[str, str] | None:
    """ENTITY and PROJECT of the one project `selectors` name; None when they name several, or
    projects by pattern (`ENTITY`, `ENTITY/GLOB`)."""
    chosen, *more = selectors
    if more or chosen.project is None or chosen.is_pattern:
        return None
    return chosen.entity, chosen.project


def open_project(live: tuple[str, str], drafts: bool, connection: Connection) -> Project:
    """The live project (the objects picked, if any), connected; its reading is announced on
    stderr."""
    project = Project(connect(connection), *live, drafts=drafts, only=picked())
    status(f"Reading {project.target} from {project.client.base_url} ...")
    return project


def find_projects(
    selectors: list[Selector], connection: Connection
) -> tuple[Client, list[tuple[str, str]]]:
    """The projects `selectors` name (a `TargetError` when a pattern names none), connected;
    their reading is announced on stderr."""
    client = connect(connection)
    status(f"Reading {', '.join(map(str, selectors))} from {client.base_url} ...")
    return client, resolve(client, selectors)


def tell_found(counts: Counts, drafts: bool) -> None:
    """What the project held, once it has all been read."""
    status(live_report.found_line(counts))
    if not drafts:
        status(
            "Warning: drafts are skipped; publishing a stale draft undoes its report's migration."
        )


PROGRESS_EVERY = 5.0  # seconds between progress lines when stderr is no terminal
_bar = threading.Event()  # a progress bar is drawn on the terminal


def retry_line(message: str) -> None:
    """One line per retry on stderr (`Retrying after HTTP 429 (waiting 2 s) ...`), except
    while a progress bar is drawn at the terminal: the line would break it."""
    if not _bar.is_set():
        status(message)


@contextmanager
def progress(total: int, label: str) -> Iterator[Callable[[Outcome], None]]:
    """At a terminal, a progress bar when the run is long enough to need one. Elsewhere (a
    pipe, a CI log) a plain line every `PROGRESS_EVERY` seconds while the run goes on, so a
    long apply is never silent; a run shorter than that prints none."""
    if not sys.stderr.isatty() or QUIET.is_set():  # -q: `status` prints none of those lines
        with _progress_lines(total, label) as tick:
            yield tick
        return
    if total < 5:
        yield lambda outcome: None
        return
    _bar.set()
    try:
        with click.progressbar(length=total, label=label, file=drawn_on()) as bar:
            yield lambda outcome: bar.update(1)
    finally:
        _bar.clear()


@contextmanager
def _progress_lines(total: int, label: str) -> Iterator[Callable[[Outcome], None]]:
    """`Applying: 40/120 objects ...` on stderr, from a thread of its own: a line comes even
    while every object in flight is waiting on W&B."""
    done = [0]
    stop = threading.Event()

    def report() -> None:
        while not stop.wait(PROGRESS_EVERY):
            status(f"{label}: {done[0]}/{total} objects ...")

    reporter = threading.Thread(target=report, daemon=True)
    reporter.start()
    try:
        yield lambda outcome: done.__setitem__(0, done[0] + 1)
    finally:
        stop.set()
        reporter.join()


def read_history(
    project: Project,
    migration: Migration,
    options: Options,
    runs: int,
    walked: Iterable[Walking] = (),
) -> tuple[Options, Iterator[Walking]]:
    """`options` with the project's key census; on stderr, what it found (or why not).
    `walked`: the objects being walked meanwhile (`live.project.meanwhile`), given back."""
    census = partial(with_history, project, migration, options, runs, cache_folder(os.environ))
    (found, problem), rest = meanwhile(census, iter(walked))
    if problem is not None:
        status(f"Warning: {problem}; no boundary and no blank-panel warnings")
    elif found.history is not None and not found.history.runs:
        status(f"{project.target} has no runs yet: no boundary to show.")
    return found, rest


def picked() -> tuple[Pick, ...]:
    """The objects `--only` and URL TARGETs picked (none: all), as `live_targets` kept them."""
    picks: tuple[Pick, ...] = click.get_current_context().meta.get(PICKS, ())
    return picks
