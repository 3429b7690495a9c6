"""Timing side by side: each side a process of its own, rounds alternating, medians taken."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLOORS = ROOT / "benchmarks" / "floors"


@dataclass(frozen=True)
class Result:
    name: str
    measured: str  # wbmigrate's figure, for the table
    floor: str  # the floor's figure, or the other tool's
    ratio: float
    goal: str  # e.g. "<= 1.5x"
    ok: bool


@dataclass
class Findings:
    """A suite's rows of the table, and the lines to print under it."""

    results: list[Result] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __iadd__(self, other: Findings) -> Findings:
        self.results += other.results
        self.notes += other.notes
        return self


def seconds(value: float) -> str:
    return f"{value:.3f} s" if value < 10 else f"{value:.1f} s"


def wbmigrate(*args: str) -> list[str]:
    """wbmigrate as a user runs it."""
    return [sys.executable, "-m", "wbmigrate", *args]


def floor(script: str, *args: str) -> list[str]:
    """One of the scripts in benchmarks/floors/."""
    return [sys.executable, str(FLOORS / script), *args]


def run(
    command: list[str], env: Mapping[str, str] | None = None, codes: Sequence[int] = (0,)
) -> float:
    """Seconds from starting `command` to its exit (its output thrown away, as when it is
    piped); an unexpected exit code is an error that shows the end of its stderr."""
    started = time.perf_counter()
    done = subprocess.run(
        command,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode not in codes:
        shown = " ".join(command[1:4])
        raise RuntimeError(f"{shown} ... exited {done.returncode}:\n{done.stderr[-2000:]}")
    return elapsed


# Run a command and print the peak RSS (KiB on Linux) of it, its only child.
PEAK = (
    "import resource, subprocess, sys\n"
    "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def peak(command: list[str], env: Mapping[str, str] | None = None) -> int:
    """The peak resident memory of `command`, in KiB."""
    answer = subprocess.run(
        [sys.executable, "-c", PEAK, *command],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=True,
    )
    return int(answer.stdout.split()[-1])


def mib(kib: float) -> str:
    return f"{kib / 1024:.0f} MiB"


def alternate(
    ours: Callable[[], float], floor: Callable[[], float], rounds: int
) -> tuple[float, float, float]:
    """Median time of each side and median ratio over `rounds` alternating rounds; each side
    returns the seconds it measured (so it may prepare untimed, e.g. a fresh server)."""
    mine, theirs, ratios = [], [], []
    for _ in range(rounds):
        b = floor()
        a = ours()
        mine.append(a)
        theirs.append(b)
        ratios.append(a / b)
    return statistics.median(mine), statistics.median(theirs), statistics.median(ratios)


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def at_most(
    name: str,
    ours: float,
    floor: float,
    ratio: float,
    goal: float,
    unit: Callable[[float], str] = seconds,
) -> Result:
    return Result(name, unit(ours), unit(floor), ratio, f"<= {goal}x", ratio <= goal)


def at_least(name: str, ours: float, other: float, ratio: float, goal: float) -> Result:
    """`ratio` is how many times faster wbmigrate is than `other`."""
    return Result(name, seconds(ours), seconds(other), ratio, f">= {goal}x", ratio >= goal)
