"""Timing side by side: alternate rounds, take the median ratio."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Result:
    name: str
    measured: str  # wbmigrate's figure, for the table
    floor: str  # the floor's figure, or the other tool's
    ratio: float
    goal: str  # e.g. "<= 1.5x"
    ok: bool


def seconds(value: float) -> str:
    return f"{value:.3f} s" if value < 10 else f"{value:.1f} s"


def alternate(
    ours: Callable[[], object], floor: Callable[[], object], rounds: int
) -> tuple[float, float, float]:
    """Median time of each side and median ratio over `rounds` alternating rounds."""
    mine, theirs, ratios = [], [], []
    for _ in range(rounds):
        b = _timed(floor)
        a = _timed(ours)
        mine.append(a)
        theirs.append(b)
        ratios.append(a / b)
    return statistics.median(mine), statistics.median(theirs), statistics.median(ratios)


def _timed(work: Callable[[], object]) -> float:
    gc.collect()
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


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
