"""`python -m benchmarks [--smoke]`: wbmigrate against the floor of the unavoidable work.

Every figure is a ratio of two timings (or memory peaks) taken side by side in one run, the
median of several alternating rounds, so a busy machine slows both sides alike.
"""

from __future__ import annotations

import argparse
import sys
import time

from benchmarks import core, live, memory, tree
from benchmarks.measure import Result


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes, to check the benchmarks still run (CI)"
    )
    parser.add_argument(
        "--only",
        choices=["core", "check", "live", "memory"],
        action="append",
        help="run only these benchmarks",
    )
    args = parser.parse_args()
    chosen = args.only or ["core", "check", "live", "memory"]
    suites = {"core": core.run, "check": tree.run, "live": live.run, "memory": memory.run}
    results: list[Result] = []
    started = time.perf_counter()
    for name in chosen:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        results += suites[name](smoke=args.smoke)
    print(table(results))
    print(
        f"\n({time.perf_counter() - started:.0f} s; "
        f"{'smoke sizes' if args.smoke else 'full sizes'})"
    )
    return 0 if all(r.ok for r in results) or args.smoke else 1


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
