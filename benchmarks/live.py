"""Live: `wbmigrate plan` and `apply` on a generated project (views, automations, runs) on the
local W&B-compatible server, 100 ms added to every request (a W&B round trip), each side a
process of its own, against

- the floor (benchmarks/floors/live.py): every page of the listings the job needs (the views of
  each type, the automations, the runs and their keys for the key census) on as many connections
  as wbmigrate reads them with, each spec parsed; for `apply`, then one batched read per batch of
  `--jobs` changed objects and one write per changed object, as many at once as wbmigrate;
- W&B's own SDK loop (benchmarks/floors/user_loop.py): `Report.from_url` + `save()` one report
  at a time, then the automations one at a time; run once, on a sample of the reports.

Every side starts with an empty census cache (a first plan); requests are counted from the
server's log.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.data import server_state
from benchmarks.measure import Row, Timed, alternate, at_most, floor, run, wbmigrate
from benchmarks.server import ENTITY, PROJECT, Requests, Server, running
from benchmarks.writes import written_by_apply
from wbmigrate import find_mapping
from wbmigrate.engine.history import DEFAULT_RUNS
from wbmigrate.live.census import KEYS_AT_ONCE, KEYS_BATCH, RUNS_PAGE
from wbmigrate.live.client import PAGE_SIZE
from wbmigrate.live.objects import DRAFT, REPORT, WORKSPACE
from wbmigrate.live.queries import LIST_RUNS, LIST_VIEWS, RUN_KEYS, list_triggers
from wbmigrate.live.support import FEATURES

LATENCY = 0.1  # a W&B round trip (a smoke run, `--quick`, adds none)
JOBS = 4  # apply's default --jobs
LOOP_SAMPLE = 50  # reports the SDK loop migrates (its time is per object)
VIEW_TYPES = [REPORT, DRAFT, WORKSPACE]
# As many as wbmigrate has in flight at most: a connection per listing (each view type, the
# automations), one for the runs and KEYS_AT_ONCE for their keys.
CONNECTIONS = len(VIEW_TYPES) + 1 + 1 + KEYS_AT_ONCE
TARGET = f"{ENTITY}/{PROJECT}"
QUIET = {"WANDB_SILENT": "true", "WANDB_ERROR_REPORTING": "false"}


@dataclass(frozen=True)
class Project:
    """A generated project: its server state file, the seconds its server adds to every
    request, and a folder for everything else."""

    state: Path
    latency: float
    folder: Path
    views: int
    triggers: int

    @property
    def objects(self) -> int:
        return self.views + self.triggers

    @property
    def size(self) -> str:
        return f"{self.views:,} views + {self.triggers:,} automations"

    def scratch(self, name: str) -> Path:
        """A fresh folder (a cache, a backup folder, a job file)."""
        return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.folder))

    def env(self, server: Server) -> dict[str, str]:
        """wbmigrate's environment against `server`, with an empty census cache."""
        return {**server.env, "XDG_CACHE_HOME": str(self.scratch("cache"))}


def make_project(folder: Path, views: int, triggers: int, latency: float) -> Project:
    state = folder / f"state-{views}.json"
    server_state(state, views, triggers)
    return Project(state, latency, folder, views, triggers)


@dataclass(frozen=True)
class Measured:
    """One comparison: the timings, and each side's requests (of the last round)."""

    timed: Timed
    ours: Requests
    theirs: Requests


# A plan takes a second or two a side, and one busy moment moves a round by tens of percent:
# more rounds than an apply's (which takes tens of seconds) cost little.
PLAN_ROUNDS = 3


def plan_rows(project: Project, rounds: int) -> list[Row]:
    measured = plan_vs_floor(project, rounds)
    ours, theirs = measured.ours.total, measured.theirs.total
    where = f"{project.size}, {project.latency * 1000:.0f} ms"
    return [
        at_most(f"live plan vs floor, {where}:", measured.timed, 1.2),
        Row(
            f"live plan requests, {project.size}: = floor (one per page)",
            f"{ours:,} vs {theirs:,}",
            ours <= theirs,
        ),
    ]


def apply_rows(project: Project, rounds: int, loop: bool) -> list[Row]:
    measured = apply_vs_floor(project, rounds)
    ours, theirs = measured.ours, measured.theirs
    where = f"{project.size}, {project.latency * 1000:.0f} ms"
    rows = [
        at_most(f"live apply vs floor, {where}:", measured.timed, 1.25),
        Row(
            f"live apply requests, {project.size}: writes = floor, reads <= floor + 3 "
            "(read-backs riding on no later batch)",
            f"{ours.writes:,} w + {ours.reads:,} r vs {theirs.writes:,} w + {theirs.reads:,} r",
            ours.writes <= theirs.writes and ours.reads <= theirs.reads + 3,
        ),
    ]
    if loop:
        rows.append(loop_row(project, min(measured.timed.ours)))
    return rows


def plan_vs_floor(project: Project, rounds: int) -> Measured:
    """Both sides against one server: planning writes nothing."""
    counts: dict[str, Requests] = {}
    with running(project.state, project.latency) as server:
        job = floor_job(project, server)

        def counted(side: str, command: list[str], env: dict[str, str]) -> float:
            before = len(server.operations())
            seconds = run(command, env)
            counts[side] = server.since(before)
            return seconds

        timed = alternate(
            lambda: counted("ours", wbmigrate("plan", TARGET), project.env(server)),
            lambda: counted("floor", floor("live.py", str(job)), {}),
            rounds,
        )
    return Measured(timed, counts["ours"], counts["floor"])


def apply_vs_floor(project: Project, rounds: int) -> Measured:
    """Each side against a fresh server holding the project as generated."""
    batches = written_by_apply(project.state, project.scratch("writes"), project.env, JOBS)
    counts: dict[str, Requests] = {}

    def fresh(side: str, command: Callable[[Server], list[str]]) -> float:
        with running(project.state, project.latency) as server:
            seconds = run(command(server), project.env(server))
            counts[side] = server.since(0)
            return seconds

    def apply(server: Server) -> list[str]:
        backups = project.scratch("backups") / "backup"
        return wbmigrate("apply", TARGET, "--yes", "--backup-dir", str(backups))

    timed = alternate(
        lambda: fresh("ours", apply),
        lambda: fresh(
            "floor", lambda server: floor("live.py", str(floor_job(project, server, batches)))
        ),
        rounds,
    )
    return Measured(timed, counts["ours"], counts["floor"])


def loop_row(project: Project, apply: float) -> Row:
    """The SDK loop once, on a sample of the reports and every automation, per object against
    apply's fastest round per object."""
    migration = find_mapping("prime-rl").migration()
    renames = {old: r.new for old, r in migration.metrics.items() if r.new and not r.removed}
    sample = min(LOOP_SAMPLE, project.views)
    with running(project.state, project.latency) as server:
        job = project.scratch("loop") / "job.json"
        reports = [server.report_url(i) for i in range(sample)]
        document = {"entity": ENTITY, "project": PROJECT, "reports": reports, "renames": renames}
        job.write_text(json.dumps(document))
        seconds = run(floor("user_loop.py", str(job)), {**server.env, **QUIET})
        asked = server.since(0)
    loop_each = seconds / (sample + project.triggers)
    apply_each = apply / project.objects
    return Row(
        f"from_url + save() loop vs apply, per object ({sample} reports + "
        f"{project.triggers} automations of the {project.views:,}): >= 5x slower",
        f"{loop_each / apply_each:.1f}x ({loop_each * 1000:.0f} vs {apply_each * 1000:.0f} ms; "
        f"{asked.total:,} requests)",
        loop_each >= 5 * apply_each,
    )


def floor_job(project: Project, server: Server, batches: Path | None = None) -> Path:
    """The job of benchmarks/floors/live.py: wbmigrate's own queries and page sizes."""
    job = project.scratch("floor") / "job.json"
    queries = {
        "views": LIST_VIEWS,
        "triggers": list_triggers(),
        "runs": LIST_RUNS,
        "keys": RUN_KEYS,
        "features": FEATURES,
    }
    document = {
        "url": server.url,
        "api_key": server.api_key,
        "entity": ENTITY,
        "project": PROJECT,
        "view_types": VIEW_TYPES,
        "queries": queries,
        "page": PAGE_SIZE,
        "runs_page": RUNS_PAGE,
        "runs_cap": DEFAULT_RUNS,
        "keys_batch": KEYS_BATCH,
        "connections": CONNECTIONS,
        "jobs": JOBS,
        "batches": str(batches) if batches else None,
    }
    job.write_text(json.dumps(document))
    return job
