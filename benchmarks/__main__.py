"""`python -m benchmarks [--quick] [--only NAME] [--size SIZE] [--rounds N]`: wbmigrate against
the floor of the same work, and against W&B's own SDK loop; one table of goals, figures and
whether each was met.

Each side is a process of its own, run as a user runs it, interpreter start included. Every
timing is a ratio of two sides measured in alternating rounds (so a busy machine slows both
alike): the median ratio, its spread, and each side's min/median seconds.

To measure what a piece of wbmigrate buys, run one benchmark and size (`--only plan --size
small`) with BENCHMARKS_WBMIGRATE naming a script that switches it off and calls
`wbmigrate.cli.main()`, and without.
"""

from __future__ import annotations

import argparse
import compileall
import datetime as dt
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import wbmigrate
from benchmarks import large_files, live, scaling, tree
from benchmarks.measure import Row

SIZES = {"small": (500, 100), "large": (5_000, 1_000)}
QUICK = {"small": (8, 2), "large": (16, 4)}
BENCHMARKS = ["plan", "apply", "check", "large", "scaling"]


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="tiny sizes, no added latency, one round (a smoke run)"
    )
    parser.add_argument("--only", choices=BENCHMARKS, action="append", help="only these benchmarks")
    parser.add_argument(
        "--size", choices=list(SIZES), action="append", help="only these live sizes"
    )
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    args = parser.parse_args()
    compileall.compile_dir(Path(wbmigrate.__file__).parent, quiet=1)  # as `pip install` leaves it
    started = time.perf_counter()
    rounds = 1 if args.quick else args.rounds
    rows = measure(args.only or BENCHMARKS, args.size or list(SIZES), args.quick, rounds)
    print(machine())
    print()
    print(table(rows))
    sizes = "quick sizes" if args.quick else "full sizes"
    plan = plan_rounds(args.quick, rounds)
    print(f"\n({time.perf_counter() - started:.0f} s; {sizes}; {rounds} rounds, plan {plan})")
    return 0 if all(row.met for row in rows) or args.quick else 1


def measure(chosen: list[str], sizes: list[str], quick: bool, rounds: int) -> list[Row]:
    given = QUICK if quick else SIZES
    latency = 0.0 if quick else live.LATENCY
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            if {"plan", "apply"} & set(chosen):
                project = live.make_project(Path(folder), *given[size], latency)
            if "plan" in chosen:
                work = partial(live.plan_rows, project, plan_rounds(quick, rounds))
                rows += timed(f"plan {size}", work)
            if "apply" in chosen:  # the SDK loop beside the small size's apply
                work = partial(live.apply_rows, project, rounds, size == "small")
                rows += timed(f"apply {size}", work)
        if "check" in chosen:
            rows += timed("check", partial(tree.check_rows, 50 if quick else 5_000, rounds))
        if "large" in chosen:
            rows += timed("large files", partial(large_files.rows, rounds, quick))
        if "scaling" in chosen:
            small, large = given["small"], given["large"]
            rows += timed("scaling", partial(scaling.rows, Path(folder), small, large, rounds))
    return rows


def plan_rounds(quick: bool, rounds: int) -> int:
    """A plan's rounds: more than an apply's (see live.PLAN_ROUNDS); a smoke run's one."""
    return 1 if quick else live.PLAN_ROUNDS * rounds


def timed(name: str, work: Callable[[], list[Row]]) -> list[Row]:
    """`work`'s rows, its time told on stderr."""
    print(f"running {name} ...", end=" ", file=sys.stderr, flush=True)
    began = time.perf_counter()
    rows = work()
    print(f"{time.perf_counter() - began:.0f} s", file=sys.stderr, flush=True)
    return rows


def machine() -> str:
    """Where and when the figures were taken."""
    return (
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC; {os.cpu_count()} CPUs ({_cpu()}); "
        f"Python {platform.python_version()}; {platform.platform()}"
    )


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            names = [
                line.split(":", 1)[1].strip() for line in info if line.startswith("model name")
            ]
    except OSError:
        names = []
    return names[0] if names else platform.processor() or platform.machine()


def table(rows: list[Row]) -> str:
    cells = [("goal", "figure", "")] + [
        (row.goal, row.figure, "met" if row.met else "MISSED") for row in rows
    ]
    widths = [max(len(cell[i]) for cell in cells) for i in range(3)]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(cell, widths, strict=True)).rstrip() for cell in cells
    ]
    return "\n".join([lines[0], "-" * max(map(len, lines)), *lines[1:]])


if __name__ == "__main__":
    sys.exit(main())
