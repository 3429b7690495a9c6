"""Core: `wbmigrate plan FOLDER --format json` over N spec files, against a process that reads
each file and runs `json.loads` + `json.dumps` on it. Interpreter start is in both."""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks.data import report_texts
from benchmarks.measure import Findings, alternate, at_most, floor, run, wbmigrate


def run_suite(smoke: bool = False) -> Findings:
    texts = report_texts(8 if smoke else 200, seed=11, high=50_000 if smoke else 500_000)
    megabytes = sum(map(len, texts)) / 1e6
    with tempfile.TemporaryDirectory() as folder:
        for i, text in enumerate(texts):
            (Path(folder) / f"report{i:03d}.json").write_text(text)
        mine, theirs, ratio = alternate(
            lambda: run(wbmigrate("plan", folder, "--format", "json")),
            lambda: run(floor("core.py", folder)),
            3 if smoke else 7,
        )
    name = f"core: plan {len(texts)} spec files ({megabytes:.0f} MB), json"
    return Findings([at_most(name, mine, theirs, ratio, 1.5)])
