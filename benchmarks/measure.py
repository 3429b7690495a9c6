"""Timing side by side: each side a process of its own, interpreter start included, rounds
alternating so a busy machine slows both sides alike; a row of the table per goal."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLOORS = ROOT / "benchmarks" / "floors"


@dataclass(frozen=True)
class Row:
    """One goal of the table: what is asked, what was measured, and whether it was met."""

    goal: str
    figure: str
    met: bool


@dataclass(frozen=True)
class Timed:
    """Both sides' seconds per round (alternating), and their ratios."""

    ours: list[float]
    theirs: list[float]

    @property
    def ratios(self) -> list[float]:
        return [a / b for a, b in zip(self.ours, self.theirs, strict=True)]

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)

    def figure(self) -> str:
        """The median ratio, the min-max of the ratios, and each side's min / median."""
        spread = f"{min(self.ratios):.2f}-{max(self.ratios):.2f}"
        return (
            f"{self.ratio:.2f}x ({spread}; {_min_median(self.ours)} vs {_min_median(self.theirs)})"
        )


def _min_median(values: list[float]) -> str:
    return f"{min(values):.2f}/{statistics.median(values):.2f} s"


def at_most(goal: str, timed: Timed, limit: float) -> Row:
    return Row(f"{goal} <= {limit}x", timed.figure(), timed.ratio <= limit)


def wbmigrate(*args: str) -> list[str]:
    """wbmigrate as a user runs it; or, with BENCHMARKS_WBMIGRATE set, that script run in its
    place (a wrapper that switches a piece of wbmigrate off, to measure what it buys)."""
    script = os.environ.get("BENCHMARKS_WBMIGRATE")
    return [sys.executable, *([script] if script else ["-m", "wbmigrate"]), *args]


def floor(script: str, *args: str) -> list[str]:
    """One of the scripts in benchmarks/floors/."""
    return [sys.executable, str(FLOORS / script), *args]


def run(
    command: list[str], env: Mapping[str, str] | None = None, codes: Sequence[int] = (0,)
) -> float:
    """Seconds from starting `command` to its exit (its output thrown away, as when piped); an
    unexpected exit code is an error that shows the end of its stderr."""
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
        raise RuntimeError(
            f"{' '.join(command[1:4])} ... exited {done.returncode}:\n{done.stderr[-2000:]}"
        )
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


def alternate(ours: Callable[[], float], theirs: Callable[[], float], rounds: int) -> Timed:
    """`rounds` alternating rounds, the floor first; each side returns the seconds it measured
    (so it may prepare untimed, e.g. start a fresh server)."""
    mine: list[float] = []
    floors: list[float] = []
    for _ in range(rounds):
        floors.append(theirs())
        mine.append(ours())
    return Timed(mine, floors)
