"""Scaling, without added latency (CPU only): time and peak memory per object of `plan` and
`apply` at 5,000 views + 1,000 automations against 500 + 100, each above an empty project's
(interpreter start, imports, empty listings), so fixed costs flatter neither size. Linear is
1.0x. And the peak memory of `apply` against `plan`'s at the large size. Each figure is the
least of a few rounds, each on a fresh server."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.live import TARGET, Project, make_project
from benchmarks.measure import Row, peak, wbmigrate
from benchmarks.server import running


@dataclass(frozen=True)
class Cost:
    """One command over one project: the least seconds and peak RSS (KiB) of a few rounds."""

    seconds: float
    kib: int


def rows(folder: Path, small: tuple[int, int], large: tuple[int, int], rounds: int) -> list[Row]:
    projects = [make_project(folder, *size, 0.0) for size in [(0, 0), small, large]]
    rows, peaks = [], []
    for command in ("plan", "apply"):
        costs = [cost(project, command, rounds) for project in projects]
        rows.append(per_object(f"{command} time", projects, [c.seconds for c in costs], _ms))
        rows.append(per_object(f"{command} memory", projects, [c.kib for c in costs], _kib))
        peaks.append(costs[-1].kib)
    plan, apply = peaks  # apply keeps the objects to write on disk, not in memory
    figure = f"{apply / plan:.2f}x ({apply / 1024:.0f} vs {plan / 1024:.0f} MiB)"
    goal = f"0 ms: apply memory vs plan memory, {projects[-1].size}: <= 2x"
    return [*rows, Row(goal, figure, apply <= 2 * plan)]


def cost(project: Project, command: str, rounds: int) -> Cost:
    """`command` over the project on a fresh server without added latency, `rounds` times."""
    seconds, kib = [], []
    for _ in range(rounds):
        args = [command, TARGET]
        if command == "apply":
            args += ["--yes", "--backup-dir", str(project.scratch("backups") / "b")]
        with running(project.state, project.latency) as server:
            started = time.perf_counter()
            kib.append(peak(wbmigrate(*args), project.env(server)))
            seconds.append(time.perf_counter() - started)
    return Cost(min(seconds), min(kib))


def per_object(
    what: str, projects: list[Project], values: list[float], unit: Callable[[float], str]
) -> Row:
    """The cost per object above the empty project's, at the large size against the small."""
    (_, small, large), (empty, at_small, at_large) = projects, values
    ours = (at_large - empty) / large.objects
    theirs = (at_small - empty) / small.objects
    return Row(
        f"0 ms: {what} per object, {large.views:,} vs {small.views:,} views: <= 1.2x",
        f"{ours / theirs:.2f}x ({unit(ours)} vs {unit(theirs)})",
        ours / theirs <= 1.2,
    )


def _ms(value: float) -> str:
    return f"{value * 1000:.2f} ms"


def _kib(value: float) -> str:
    return f"{value:.1f} KiB"
