"""The benchmarks still run: `python -m benchmarks --quick`, every benchmark end to end at tiny
sizes without added latency. Only the table's structure is checked: timings belong in
`python -m benchmarks`, never in tests."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GOALS = [
    *["live plan vs floor", "live plan requests", "live apply vs floor", "live apply requests"],
    "from_url + save() loop vs apply",
    *["live plan vs floor", "live plan requests", "live apply vs floor", "live apply requests"],
    "check",
    *["0 ms: check time per byte, one Python", "0 ms: check time per byte, one JSON"],
    "0 ms: check time per byte, one YAML",
    *["0 ms: plan time", "0 ms: plan memory", "0 ms: apply time", "0 ms: apply memory"],
    "0 ms: apply memory vs plan memory",
]


@pytest.mark.slow
def test_every_benchmark_runs_at_quick_size():
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert re.match(r"\d{4}-\d\d-\d\d .* \d+ CPUs .* Python 3", lines[0])
    assert lines[2].split() == ["goal", "figure"]
    rows = [line for line in lines[4:] if line.endswith((" met", " MISSED"))]
    assert len(rows) == len(GOALS), result.stdout
    for row, goal in zip(rows, GOALS, strict=True):
        assert row.startswith(goal), (row, goal)
    assert "quick sizes" in result.stdout
