"""Memory: peak RSS of `wbmigrate plan` over a project of 10,000 views against the same over
1,000 views. `plan` streams (each object is planned as it arrives and then let go), so the
ten times larger project should need about the same memory."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.data import server_state
from benchmarks.measure import Result, at_most, median
from benchmarks.server import ENTITY, PROJECT, Server, running

# Run a command and print the peak RSS (KiB on Linux) of it, its only child.
PEAK = (
    "import resource, subprocess, sys\n"
    "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def run(smoke: bool = False) -> list[Result]:
    small, large = (50, 500) if smoke else (1_000, 10_000)
    rounds = 1 if smoke else 3
    peaks: dict[int, list[int]] = {small: [], large: []}
    with tempfile.TemporaryDirectory() as folder:
        for views in (small, large):
            state = Path(folder) / f"state{views}.json"
            server_state(state, views, triggers=views // 10, low=2_000, high=20_000)
            with running(state, latency=0.0) as server:
                peaks[views] = [_peak(server) for _ in range(rounds)]
    ours, floor = median(peaks[large]), median(peaks[small])
    return [
        at_most(
            f"memory: plan {large:,} views vs {small:,}",
            ours,
            floor,
            ours / floor,
            1.2,
            unit=lambda kib: f"{kib / 1024:.0f} MiB",
        )
    ]


def _peak(server: Server) -> int:
    command = [sys.executable, "-m", "wbmigrate", "plan", f"{ENTITY}/{PROJECT}"]
    answer = subprocess.run(
        [sys.executable, "-c", PEAK, *command],
        env={**os.environ, **server.env},
        capture_output=True,
        text=True,
        check=True,
    )
    return int(answer.stdout.split()[-1])
