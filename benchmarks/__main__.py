"""`python -m benchmarks [--smoke] [--scale]`: wbmigrate against the floor of the unavoidable
work, and against the loop users write today.

Each side is a process of its own, run as a user runs it, interpreter start included. Every
figure is a ratio of two timings (or memory peaks, or request counts) taken side by side in
one run, the median of several alternating rounds, so a busy machine slows both sides alike.
"""

from __future__ import annotations

import argparse
import compileall
import datetime as dt
import os
import platform
import sys
import time
from pathlib import Path

import wbmigrate
from benchmarks import core, live, memory, scale, tree
from benchmarks.measure import Findings, Result

SUITES = {
    "core": core.run_suite,
    "check": tree.run_suite,
    "live": live.run_suite,
    "memory": memory.run_suite,
    "scale": scale.run_suite,
}
DEFAULT = ["core", "check", "live", "memory"]


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes, to check the benchmarks still run (CI)"
    )
    parser.add_argument(
        "--scale",
        action="store_true",
        help="also the scale suite: 5,000 views + 1,000 automations, a 100,000-entry mapping "
        "(about 5 more minutes)",
    )
    parser.add_argument(
        "--only", choices=list(SUITES), action="append", help="run only these benchmarks"
    )
    args = parser.parse_args()
    chosen = args.only or DEFAULT + (["scale"] if args.scale or args.smoke else [])
    compiled()
    findings = Findings()
    started = time.perf_counter()
    for name in chosen:
        print(f"running {name} ...", end=" ", file=sys.stderr, flush=True)
        began = time.perf_counter()
        findings += SUITES[name](smoke=args.smoke)
        print(f"{time.perf_counter() - began:.0f} s", file=sys.stderr, flush=True)
    print(machine())
    print()
    print(table(findings.results))
    if findings.notes:
        print()
        print("\n".join(f"- {note}" for note in findings.notes))
    print(
        f"\n({time.perf_counter() - started:.0f} s; "
        f"{'smoke sizes' if args.smoke else 'full sizes'})"
    )
    return 0 if all(r.ok for r in findings.results) or args.smoke else 1


def compiled() -> None:
    """wbmigrate's modules byte-compiled, as `pip install .` leaves them: run from a source
    tree with PYTHONDONTWRITEBYTECODE set (some images set it), every run would compile them
    again, a cost no installed copy has."""
    compileall.compile_dir(Path(wbmigrate.__file__).parent, quiet=1)


def machine() -> str:
    """Where and when the figures were taken, for the README to quote."""
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


def table(results: list[Result]) -> str:
    rows = [("benchmark", "wbmigrate", "floor/other", "ratio", "goal", "")]
    rows += [
        (r.name, r.measured, r.floor, f"{r.ratio:.2f}x", r.goal, "ok" if r.ok else "MISSED")
        for r in results
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    return "\n".join(line.rstrip() for line in [lines[0], "-" * len(lines[0]), *lines[1:]])


if __name__ == "__main__":
    sys.exit(main())
