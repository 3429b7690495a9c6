"""What TARGETs name: a W&B URL's project and object (`url_target`); an organisation at once:
TARGETs that name several projects (`ENTITY`, `ENTITY/GLOB`, or a list of `ENTITY/PROJECT`s),
read with bounded concurrency, and one backup folder for a run that
writes to many of them (a sub-folder per project, itself a whole backup, and one journal of the
run across projects).

One project that cannot be read (a 403, a project gone) never stops the others: it is reported
with its reason, and the rest go on.
"""

from __future__ import annotations

import base64
import fnmatch
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qs, unquote, urlsplit

from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url

from wbmigrate.engine.model import Options
from wbmigrate.live import project as live_project
from wbmigrate.live.backup import BackupError
from wbmigrate.live.census import app_url
from wbmigrate.live.client import Client
from wbmigrate.live.credentials import FORGE, Host
from wbmigrate.live.project import Counts, Pick, Project, Selector, TargetError, selector
from wbmigrate.live.transport import ApiError
from wbmigrate.plan import Planned, Tally

if TYPE_CHECKING:
    from wbmigrate.live.prepare import Work
    from wbmigrate.mapping import Migration

R = TypeVar("R")

# Projects read at once: at 100 ms a request, `plan ENTITY` of 8 projects of 70 objects took
# 4.37 s so, 8.73 s one project after another.
PROJECT_JOBS = 4
SUBPAGES = frozenset({"workspace", "table"})  # a project's pages a saved view's ?nw= may follow


def url_target(url: str, host: Host) -> tuple[Selector, Pick | None]:
    """The entity or project a W&B URL names, and the report or saved workspace it points at
    (None: none): `{app}/ENTITY/PROJECT[/workspace|/table][?nw=ID]`,
    `{app}/ENTITY/PROJECT/reports/TITLE--ID[/edit]` (the id without its `=` padding, as
    wandb_workspaces' `Report.from_url` reads it), another page of the project, or
    `{app}/ENTITY`. A URL on another W&B deployment than `host` is a `TargetError` naming both:
    nothing is ever sent to a URL's host, and it would have named someone else's project."""
    if not url.isprintable() or " " in url:
        raise TargetError(f"{url!r}: a W&B URL has no white space or control character in it")
    try:
        parsed = parse_url(url)
    except LocationParseError:
        parsed = None
    if parsed is None or not parsed.host:
        raise TargetError(f"{url}: not a W&B URL")
    if parsed.auth is not None:  # never repeated: it may hold the key
        raise TargetError("a W&B URL with a user name or password in it; give it as W&B shows it")
    name = parsed.host.lower()
    if app_host(name, parsed.port) != app_host(host.name, host.port):
        raise TargetError(
            f"{url}: this URL is on {parsed.netloc}, but the W&B host is {host.url} ({host.source})"
        )
    parts = [unquote(part) for part in (parsed.path or "").split("/") if part]
    if name in FORGE and parts[:1] == ["wandb"]:  # Forge's app: forge.coreweave.com/wandb/...
        parts = parts[1:]
    found = selector("/".join(parts[:2]))
    if found is None or (found.project is not None and found.is_pattern):
        raise TargetError(f"{url}: not the URL of a W&B entity, project, report or saved workspace")
    rest = parts[2:]
    if rest[:1] == ["reports"] and len(rest) >= 2 and rest[2:] in ([], ["edit"]):
        return found, Pick(url, _report_id(url, rest[1]))
    view = parse_qs(parsed.query or "").get("nw", [""])[0]
    if view and found.project and (not rest or (len(rest) == 1 and rest[0] in SUBPAGES)):
        return found, Pick(url, view_names=(f"nw-{view}-v", view))
    return found, None


def _report_id(url: str, slug: str) -> str:
    """A report's id from its URL's last part, `Title--ID`: base64 of `View:NUMBER`."""
    _, _, tail = slug.rpartition("--")
    padded = tail + "=" * (-len(tail) % 4)
    try:
        ok = bool(tail) and base64.b64decode(padded, validate=True).startswith(b"View:")
    except ValueError:
        ok = False
    if not ok:
        raise TargetError(f"{url}: no report id after the title (a report's URL ends TITLE--ID)")
    return padded


def app_host(name: str, port: int | None) -> str:
    """Which W&B deployment a host serves, as its app's host[:port]: the API host and its app
    go together (`api.wandb.ai`, `wandb.ai`), as do the Forge names in front of them."""
    app = urlsplit(app_url(f"https://{FORGE.get(name, name)}")).netloc
    return app if port is None else f"{app}:{port}"


def resolve(client: Client, selectors: Iterable[Selector]) -> list[tuple[str, str]]:
    """The projects the selectors name, in the order given (each once). An entity's projects
    are listed once, however many selectors need them; a pattern that matches none is a
    `TargetError`, so a typo never passes for an empty organisation."""
    listed: dict[str, list[str]] = {}
    found: dict[tuple[str, str], None] = {}
    for chosen in selectors:
        if not chosen.is_pattern:
            assert chosen.project is not None
            found[(chosen.entity, chosen.project)] = None
            continue
        if chosen.entity not in listed:
            listed[chosen.entity] = list(live_project.projects(client, chosen.entity))
        pattern = chosen.project or "*"
        matched = [p for p in listed[chosen.entity] if fnmatch.fnmatchcase(p, pattern)]
        if not matched:
            raise TargetError(f"{chosen}: no project of {chosen.entity} matches")
        found.update(dict.fromkeys((chosen.entity, p) for p in matched))
    return list(found)


@dataclass(frozen=True)
class Result:
    """One project's part of an organisation run: its value, or why it failed."""

    target: str
    value: Any = None
    error: str | None = None


def each_project(targets: list[tuple[str, str]], work: Callable[[str, str], R]) -> list[Result]:
    """`work(entity, project)` for every project, `PROJECT_JOBS` at a time, results in target order.
    An API or backup error fails that project alone; anything else (a bug, Ctrl-C) is
    raised."""

    def one(target: tuple[str, str]) -> Result:
        name = "/".join(target)
        try:
            return Result(name, work(*target))
        except (ApiError, BackupError) as exc:
            return Result(name, error=str(exc))

    with ThreadPoolExecutor(max_workers=max(1, min(PROJECT_JOBS, len(targets)))) as pool:
        return list(pool.map(one, targets))


# --- planning many projects -------------------------------------------------------------------


@dataclass(frozen=True)
class ProjectPlan:
    """One project planned: its options (with its census), what it held, the tally, what
    `render` made of its objects, and why it has no census (if so)."""

    target: str
    options: Options
    found: Counts
    tally: Tally
    rendered: Any
    problem: str | None = None


def plan_projects(
    client: Client,
    targets: list[tuple[str, str]],
    migration: Migration,
    options: Options,
    render: Callable[[Options, Iterator[Planned]], Any],
    drafts: bool = True,
    runs: int = 0,
    cache: Path | None = None,
) -> list[Result]:
    """Plan every project, `PROJECT_JOBS` at a time; each project's objects are rendered as they are
    planned and let go, so memory holds one rendering per project, not its specs."""

    def one(entity: str, name: str) -> ProjectPlan:
        project = Project(client, entity, name, drafts)
        own, problem = live_project.with_history(project, migration, options, runs, cache)
        found, tally = Counts(), Tally()
        planned = live_project.plan_project(project, migration, own, found)
        rendered = render(own, map(tally.add, planned))
        return ProjectPlan(project.target, own, found, tally, rendered, problem)

    return each_project(targets, one)


# --- applying to many projects ----------------------------------------------------------------


@dataclass(frozen=True)
class Prepared:
    """One project read and planned for apply: its options (with its key census) and what
    its run must write."""

    project: Project
    options: Options
    work: Work


def prepare_projects(
    client: Client,
    targets: list[tuple[str, str]],
    migration: Migration,
    options: Options,
    drafts: bool,
    runs: int,
    cache: Path | None,
    warn: Callable[[str], None],
    shown: bool = False,
) -> list[Result]:
    """Read and plan every project for apply, `PROJECT_JOBS` at a time; `warn` hears why a
    project has no key census; `shown`: each keeps its objects' plans (`prepare_apply`)."""
    from wbmigrate.live.prepare import prepare_apply

    def one(entity: str, name: str) -> Prepared:
        project = Project(client, entity, name, drafts)
        own, problem = live_project.with_history(project, migration, options, runs, cache)
        if problem:
            warn(f"Warning: {problem}")
        work = prepare_apply(project, migration, own, None, Counts(), shown=shown)
        return Prepared(project, own, work)

    return each_project(targets, one)
