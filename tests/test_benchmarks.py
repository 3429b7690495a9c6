"""The benchmarks still run: their smoke sizes, end to end (the figures are not judged here;
timings belong in `python -m benchmarks`, never in tests)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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
    names = [row.split(":")[0] for row in rows]
    assert names == ["core", "check", "live", "live", "live", "live", "memory"], result.stdout
    assert "smoke sizes" in result.stdout
