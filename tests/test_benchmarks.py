"""The benchmarks still run: their smoke sizes, every suite, end to end (the figures are not
judged here; timings belong in `python -m benchmarks`, never in tests)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITES = ["core", *["check"] * 2, *["live"] * 5, "memory", *["scale"] * 6]


def test_every_benchmark_runs_at_smoke_size():
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--smoke"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if re.search(r"\d\.\d\dx", line)]
    assert [row.split(":")[0] for row in rows] == SUITES, result.stdout
    assert re.search(r"^\d{4}-\d\d-\d\d .* \d+ CPUs .* Python 3", result.stdout, re.M)
    assert "requests, live plan of" in result.stdout  # requests per object, from the server
    assert "requests, live apply of" in result.stdout
    assert "smoke sizes" in result.stdout
