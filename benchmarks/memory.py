"""Memory: peak RSS of `wbmigrate plan` over a project of 10,000 views against the same over
1,000 views. `plan` streams (each object is planned as it arrives and then let go), so the
ten times larger project should need about the same memory."""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks.data import server_state
from benchmarks.measure import Findings, at_most, median, mib, peak, wbmigrate
from benchmarks.server import ENTITY, PROJECT, Server, running


def run_suite(smoke: bool = False) -> Findings:
    small, large = (20, 200) if smoke else (1_000, 10_000)
    rounds = 1 if smoke else 3
    peaks: dict[int, list[int]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for views in (small, large):
            state = Path(folder) / f"state{views}.json"
            server_state(state, views, triggers=views // 10, low=2_000, high=20_000)
            with running(state, latency=0.0) as server:
                command = wbmigrate("plan", f"{ENTITY}/{PROJECT}")
                peaks[views] = [peak(command, cold(server, folder)) for _ in range(rounds)]
    ours, floor = median(peaks[large]), median(peaks[small])
    name = f"memory: plan {large:,} views vs {small:,}"
    return Findings([at_most(name, ours, floor, ours / floor, 1.2, unit=mib)])


def cold(server: Server, folder: str) -> dict[str, str]:
    """wbmigrate's environment against `server`, with an empty census cache."""
    return {**server.env, "XDG_CACHE_HOME": tempfile.mkdtemp(dir=folder)}
