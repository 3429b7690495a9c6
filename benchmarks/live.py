"""Live: `plan` and `apply` over 500 views and 100 automations on the local W&B-compatible
server with 50 ms added to every request, measured against

- the latency floor: the requests that must wait for one another, each costing the latency
  plus the server's own time for it (which the server measures), and the others divided by
  the number in flight (`--jobs`); and
- the loop a user writes today: `wandb_workspaces` `Report.from_url` over the same reports,
  one after the other.

The CLI runs in-process (click's runner), so interpreter start-up is not counted.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from click.testing import CliRunner

from benchmarks.data import server_state
from benchmarks.measure import Result, at_least, at_most, median
from benchmarks.server import ENTITY, PROJECT, Server, running
from wbmigrate.cli import cli

LATENCY = 0.05
JOBS = 4  # apply's default
Timing = tuple[str, str | None, float]


def run(smoke: bool = False) -> list[Result]:
    views, triggers = (20, 5) if smoke else (500, 100)
    rounds = 1 if smoke else 3
    plans, applies, loops = [], [], []
    with tempfile.TemporaryDirectory() as folder:
        state = Path(folder) / "state.json"
        server_state(state, views, triggers)
        for round_ in range(rounds):
            with running(state, LATENCY) as server:
                plans.append(_plan(server))
                loops.append(_loop(server, views))
                applies.append(_apply(server, Path(folder) / f"backups{round_}", plans[-1][2]))
    plan, plan_floor = median([p[0] for p in plans]), median([p[1] for p in plans])
    apply, apply_floor = median([a[0] for a in applies]), median([a[1] for a in applies])
    loop = median(loops)
    size = f"{views} views + {triggers} automations, {LATENCY * 1000:.0f} ms"
    return [
        at_most(f"live: plan {size}", plan, plan_floor, plan / plan_floor, 1.3),
        at_most(f"live: apply {size}", apply, apply_floor, apply / apply_floor, 1.3),
        at_least(f"live: plan vs a from_url loop ({views} reports)", plan, loop, loop / plan, 5),
        at_least(f"live: apply vs a from_url loop ({views} reports)", apply, loop, loop / apply, 5),
    ]


def _plan(server: Server) -> tuple[float, float, int]:
    """Seconds, floor, and how many requests fetching the project took."""
    started = time.perf_counter()
    _wbmigrate(server, "plan", f"{ENTITY}/{PROJECT}")
    seconds = time.perf_counter() - started
    fetch = server.timings()
    return seconds, _chain(fetch), len(fetch)


def _apply(server: Server, backups: Path, fetch_requests: int) -> tuple[float, float]:
    before = len(server.timings())
    started = time.perf_counter()
    _wbmigrate(server, "apply", f"{ENTITY}/{PROJECT}", "--yes", "--backup-dir", str(backups))
    seconds = time.perf_counter() - started
    timings = server.timings()[before:]
    fetch, writes = timings[:fetch_requests], timings[fetch_requests:]
    # the project is read before anything is written; then JOBS objects at a time
    floor = _chain(fetch) + sum(LATENCY + served for _, _, served in writes) / JOBS
    return seconds, floor


def _chain(fetch: list[Timing]) -> float:
    """The listings are read side by side, each page after the one before: the longest
    listing (the published reports) is the floor."""
    pages = [served for operation, kind, served in fetch if (operation, kind) == _REPORT_PAGES]
    return sum(LATENCY + served for served in pages)


_REPORT_PAGES = ("WbmigrateViews", "runs")


def _wbmigrate(server: Server, *args: str) -> None:
    result = CliRunner().invoke(cli, list(args), env=server.env, catch_exceptions=False)
    if result.exit_code != 0:
        raise RuntimeError(f"wbmigrate {args[0]} exited {result.exit_code}:\n{result.output}")


def _loop(server: Server, reports: int) -> float:
    """What users write today: load every report with wandb_workspaces, one by one."""
    import wandb_workspaces.reports.v2 as wr

    with _environment(server):
        started = time.perf_counter()
        for index in range(reports):
            wr.Report.from_url(server.report_url(index))  # type: ignore[attr-defined]
        return time.perf_counter() - started


@contextmanager
def _environment(server: Server) -> Iterator[None]:
    quiet = {"WANDB_SILENT": "true", "WANDB_ERROR_REPORTING": "false"}
    saved = {key: os.environ.get(key) for key in {**server.env, **quiet}}
    os.environ.update({**server.env, **quiet})
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
