"""Scale (`--scale`): the live figures at 5,000 views + 1,000 automations (2,500 runs), and
planning with a 100,000-entry mapping.

- `plan` of 5,000 views against its floor, 50 ms a request, as in `live`;
- time and memory per object at 5,000 views against 500, each above an empty project's
  (interpreter start, imports, empty listings), so fixed costs flatter neither size: for `plan`
  at 50 ms a request, for `apply` and both memories without added latency (at 50 ms, `apply`
  of 5,000 views takes minutes). Linear is 1.0x;
- planning the demo project with a 100,000-entry mapping against a 10,000-entry one, time per
  entry above that with the bundled mapping. Linear is 1.0x.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.data import mapping_text
from benchmarks.live import LATENCY, TARGET, Measured, Project, env_for, make_project, plan_vs_floor
from benchmarks.measure import ROOT, Findings, Result, at_most, median, peak, run, wbmigrate
from benchmarks.server import running

DEMO = ROOT / "fixtures" / "demo-project"


@dataclass(frozen=True)
class Cost:
    """One command over one project, without added latency: seconds and peak RSS (KiB)."""

    seconds: float
    kib: int


def run_suite(smoke: bool = False) -> Findings:
    sizes = [(0, 0), (10, 2), (40, 8)] if smoke else [(0, 0), (500, 100), (5_000, 1_000)]
    rounds = 1 if smoke else 3
    with tempfile.TemporaryDirectory() as folder:
        projects = [make_project(Path(folder), views, triggers) for views, triggers in sizes]
        plans = [plan_vs_floor(p, rounds if p.views < sizes[-1][0] else 1) for p in projects]
        costs = {c: [cost(p, c) for p in projects] for c in ("plan", "apply")}
        mapping = mapping_row(Path(folder), 1_000 if smoke else 100_000, rounds)
    _, base, large = projects
    last = plans[-1]
    size = f"{large.size}, {LATENCY * 1000:.0f} ms"
    findings = Findings(
        [
            at_most(f"scale: plan {size}", last.mine, last.theirs, last.ratio, 1.3),
            per_object("plan time", projects, [p.mine for p in plans], _ms),
            per_object(
                "apply time (no latency)", projects, [c.seconds for c in costs["apply"]], _ms
            ),
            per_object("plan memory", projects, [c.kib for c in costs["plan"]], _kib),
            per_object("apply memory", projects, [c.kib for c in costs["apply"]], _kib),
            mapping,
        ],
        [_requests(large, last)],
    )
    for command, measured in costs.items():
        peaks = ", ".join(f"{c.kib / 1024:.0f} MiB" for c in measured)
        findings.notes.append(
            f"peak RSS of {command}, empty / {base.views:,} / {large.views:,} views: {peaks}"
        )
    return findings


def cost(project: Project, command: str) -> Cost:
    """`command` once over the project on a fresh server without added latency."""
    backups = ["--yes", "--backup-dir", str(project.scratch("backups") / "b")]
    extra = backups if command == "apply" else []
    with running(project.state, latency=0.0) as server:
        started = time.perf_counter()
        kib = peak(wbmigrate(command, TARGET, *extra), env_for(project)(server))
        return Cost(time.perf_counter() - started, kib)


def per_object(
    what: str, projects: list[Project], values: list[float], unit: Callable[[float], str]
) -> Result:
    """The cost per object above the empty project's, at the large size against the base."""
    (_, base, large), (empty, at_base, at_large) = projects, values
    mine = (at_large - empty) / large.objects
    theirs = (at_base - empty) / base.objects
    name = f"scale: {what} per object, {large.views:,} vs {base.views:,} views"
    return at_most(name, mine, theirs, mine / theirs, 1.2, unit=unit)


def mapping_row(folder: Path, entries: int, rounds: int) -> Result:
    """`plan` of the demo project with `entries` and a tenth as many: time per entry above
    the time with the bundled mapping."""
    small = entries // 10
    per_step = max(1, small // 10)
    files: dict[int, Path] = {}
    for size in (small, entries):
        files[size] = folder / f"mapping-{size}.yaml"
        files[size].write_text(mapping_text(size, per_step))

    def plan(*mapping: str, rounds: int = rounds) -> float:
        command = wbmigrate("plan", str(DEMO), "--format", "json", *mapping)
        return median([run(command) for _ in range(rounds)])

    bundled = plan()
    at_small = (plan("--mapping", str(files[small])) - bundled) / small
    at_large = (plan("--mapping", str(files[entries]), rounds=1) - bundled) / entries
    name = f"scale: plan with a {entries:,}-entry mapping vs {small:,}, per entry"
    return at_most(name, at_large, at_small, at_large / at_small, 1.2, unit=_us)


def _requests(project: Project, plan: Measured) -> str:
    n = project.objects
    return (
        f"requests, live plan of {n:,} objects: {plan.requests.total:,} "
        f"({plan.requests.total / n:.3f} per object; floor {plan.floor_requests.total:,})"
    )


def _ms(value: float) -> str:
    return f"{value * 1000:.2f} ms/obj"


def _kib(value: float) -> str:
    return f"{value:.1f} KiB/obj"


def _us(value: float) -> str:
    return f"{value * 1e6:.1f} us/entry"
