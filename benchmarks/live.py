"""Live: `wbmigrate plan` and `apply` on a generated project (views, automations, runs) on the
local W&B-compatible server, 50 ms added to every request; each side a process of its own,
interpreter start included, against

- the floor (benchmarks/floors/live.py): the listings the job needs (the views of each type,
  the automations, the runs and their keys for the key census) on as many connections as
  wbmigrate reads them with, each answer parsed; for `apply`, then exactly one write per
  changed object, `--jobs` at a time, sending what wbmigrate sends; and
- the loop users write today for the same job (benchmarks/floors/user_loop.py).

Every side starts with an empty census cache (a first plan). Requests are counted from the
server's log.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.data import server_state
from benchmarks.measure import (
    Findings,
    Result,
    alternate,
    at_least,
    at_most,
    floor,
    run,
    wbmigrate,
)
from benchmarks.server import ENTITY, PROJECT, Requests, Server, running
from benchmarks.writes import quiet, written_by_apply
from wbmigrate import find_mapping
from wbmigrate.engine.history import DEFAULT_RUNS
from wbmigrate.live.census import KEYS_AT_ONCE, KEYS_BATCH, RUNS_PAGE
from wbmigrate.live.client import PAGE_SIZE
from wbmigrate.live.objects import DRAFT, REPORT, WORKSPACE
from wbmigrate.live.queries import LIST_RUNS, LIST_TRIGGERS, LIST_VIEWS, RUN_KEYS

LATENCY = 0.05
JOBS = 4  # apply's default --jobs
VIEW_TYPES = [REPORT, DRAFT, WORKSPACE]
# As many as wbmigrate has in flight at most: a connection per listing (each view type, the
# automations), one for the runs and KEYS_AT_ONCE for their keys.
CONNECTIONS = len(VIEW_TYPES) + 1 + 1 + KEYS_AT_ONCE
TARGET = f"{ENTITY}/{PROJECT}"


@dataclass(frozen=True)
class Project:
    """A generated project: its server state file, and a folder for everything else."""

    state: Path
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
        """A fresh path in the folder (a cache, a backup folder, a job file)."""
        return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.folder))


@dataclass(frozen=True)
class Measured:
    """One comparison: the medians of each side, the median ratio, and each side's requests."""

    mine: float
    theirs: float
    ratio: float
    requests: Requests
    floor_requests: Requests


# A plan takes about a second a side, and a busy machine moves one round by a few percent: the
# median of more rounds (an apply takes ten seconds a side: three).
PLAN_ROUNDS = 9


def run_suite(smoke: bool = False) -> Findings:
    views, triggers = (8, 2) if smoke else (500, 100)
    rounds = 1 if smoke else 3
    with tempfile.TemporaryDirectory() as folder:
        project = make_project(Path(folder), views, triggers)
        plan = plan_vs_floor(project, 1 if smoke else PLAN_ROUNDS)
        apply = apply_vs_floor(project, rounds)
        loop, loop_requests = user_loop(project)
    size = f"{project.size}, {LATENCY * 1000:.0f} ms"
    findings = Findings(
        [
            at_most(f"live: plan {size}", plan.mine, plan.theirs, plan.ratio, 1.3),
            at_most(f"live: apply {size}", apply.mine, apply.theirs, apply.ratio, 1.3),
            at_least(
                f"live: apply vs the from_url + save() loop ({project.size})",
                apply.mine,
                loop,
                loop / apply.mine,
                5,
            ),
            *request_rows(project, plan, apply),
        ]
    )
    findings.notes += request_notes(project, plan, apply, loop_requests)
    return findings


def make_project(folder: Path, views: int, triggers: int) -> Project:
    state = folder / f"state-{views}.json"
    server_state(state, views, triggers)
    return Project(state, folder, views, triggers)


def plan_vs_floor(project: Project, rounds: int) -> Measured:
    """Both sides against one server: planning writes nothing."""
    counts: dict[str, list[Requests]] = {"mine": [], "floor": []}
    with running(project.state, LATENCY) as server:
        job = floor_job(project, server)

        def counted(side: str, command: list[str], env: dict[str, str]) -> float:
            before = len(server.operations())
            seconds = run(command, env)
            counts[side].append(server.since(before))
            return seconds

        mine, theirs, ratio = alternate(
            lambda: counted("mine", wbmigrate("plan", TARGET), env(project, server)),
            lambda: counted("floor", floor("live.py", str(job)), {}),
            rounds,
        )
    return Measured(mine, theirs, ratio, counts["mine"][-1], counts["floor"][-1])


def apply_vs_floor(project: Project, rounds: int) -> Measured:
    """Each side against a fresh server holding the project as generated."""
    writes = written_by_apply(project.state, project.scratch("writes"), env_for(project))
    counts: dict[str, list[Requests]] = {"mine": [], "floor": []}

    def fresh(side: str, command: Callable[[Server], list[str]]) -> float:
        with running(project.state, LATENCY) as server:
            seconds = run(command(server), env(project, server))
            counts[side].append(server.since(0))
            return seconds

    def apply(server: Server) -> list[str]:
        backups = project.scratch("backups") / "backup"
        return wbmigrate("apply", TARGET, "--yes", "--backup-dir", str(backups))

    def its_floor(server: Server) -> list[str]:
        return floor("live.py", str(floor_job(project, server, writes)))

    mine, theirs, ratio = alternate(
        lambda: fresh("mine", apply), lambda: fresh("floor", its_floor), rounds
    )
    return Measured(mine, theirs, ratio, counts["mine"][-1], counts["floor"][-1])


def user_loop(project: Project) -> tuple[float, Requests]:
    """The loop users write, once (it is many times slower than either side above)."""
    migration = find_mapping("prime-rl").migration()
    renames = {old: r.new for old, r in migration.metrics.items() if r.new}
    with running(project.state, LATENCY) as server:
        job = project.scratch("loop") / "job.json"
        reports = [server.report_url(i) for i in range(project.views)]
        document = {"entity": ENTITY, "project": PROJECT, "reports": reports, "renames": renames}
        job.write_text(json.dumps(document))
        seconds = run(floor("user_loop.py", str(job)), {**server.env, **quiet})
        return seconds, server.since(0)


def env(project: Project, server: Server) -> dict[str, str]:
    return env_for(project)(server)


def env_for(project: Project) -> Callable[[Server], dict[str, str]]:
    """wbmigrate's environment against a server: its host and key, and an empty census cache."""
    return lambda server: {**server.env, "XDG_CACHE_HOME": str(project.scratch("cache"))}


def floor_job(project: Project, server: Server, writes: Path | None = None) -> Path:
    """The job of benchmarks/floors/live.py: wbmigrate's own queries and page sizes."""
    job = project.scratch("floor") / "job.json"
    queries = {"views": LIST_VIEWS, "triggers": LIST_TRIGGERS, "runs": LIST_RUNS, "keys": RUN_KEYS}
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
        "writes": str(writes) if writes else None,
    }
    job.write_text(json.dumps(document))
    return job


def request_rows(project: Project, plan: Measured, apply: Measured) -> list[Result]:
    def count(value: float) -> str:
        return f"{value:,.0f} requests"

    return [
        at_most(
            f"live: plan, requests ({project.objects:,} objects)",
            plan.requests.total,
            plan.floor_requests.total,
            plan.requests.total / plan.floor_requests.total,
            1.0,
            unit=count,
        ),
        apply_requests(project, apply),
    ]


def apply_requests(project: Project, apply: Measured) -> Result:
    """apply's requests per object against the floor's, as the issue states the goal: at most
    one write per changed object, and beyond the floor's listings at most one read per JOBS
    objects (the re-read of each batch before it is written, which also carries a read-back)."""
    mine, theirs = apply.requests, apply.floor_requests
    n = project.objects
    reads = (mine.reads - theirs.reads) / n
    return Result(
        f"live: apply, requests per object ({n:,} objects, {theirs.writes:,} changed)",
        f"{mine.writes / n:.2f} w + {reads:.3f} r",
        f"{theirs.writes / n:.2f} w + 0 r",
        reads * JOBS,
        f"<= 1 write + 1/{JOBS} read",
        mine.writes <= theirs.writes and reads <= 1 / JOBS,
    )


def request_notes(project: Project, plan: Measured, apply: Measured, loop: Requests) -> list[str]:
    n, changed = project.objects, apply.floor_requests.writes
    mine, theirs = apply.requests, apply.floor_requests
    beyond = (mine.reads - theirs.reads) / max(changed, 1)
    return [
        f"requests, live plan of {n:,} objects: {plan.requests.total:,} "
        f"({plan.requests.total / n:.3f} per object; floor {plan.floor_requests.total:,}): "
        f"one per page of {PAGE_SIZE} views of each type, one for the automations, one per "
        f"{RUNS_PAGE} runs listed and one per {KEYS_BATCH} runs' keys (census cache empty)",
        f"requests, live apply of {n:,} objects, {changed:,} changed: {mine.reads:,} reads "
        f"({mine.reads / n:.3f} per object; {beyond:.2f} per changed object beyond the "
        f"listings) and {mine.writes:,} writes ({mine.writes / max(changed, 1):.2f} per changed "
        f"object); floor: {theirs.reads:,} reads ({theirs.reads / n:.3f} per object), "
        f"{theirs.writes:,} writes (1 per changed object)",
        f"requests, the from_url + save() loop: {loop.reads:,} reads, {loop.writes:,} writes "
        f"({loop.total / n:.2f} per object)",
    ]
