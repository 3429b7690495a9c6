"""Core: planning N specs in-process, against json.loads + json.dumps of the same specs."""

from __future__ import annotations

import json

from benchmarks.data import report_texts
from benchmarks.measure import Result, alternate, at_most
from wbmigrate import find_mapping
from wbmigrate.engine.model import Options
from wbmigrate.plan import Source, plan_one


def run(smoke: bool = False) -> list[Result]:
    texts = report_texts(8 if smoke else 200, seed=11, high=50_000 if smoke else 500_000)
    migration = find_mapping("prime-rl").migration()
    options = Options()
    sources = [Source(f"report {i}", str(i), text, "report") for i, text in enumerate(texts)]

    def ours() -> None:
        for source in sources:
            plan_one(source, migration, options)

    def floor() -> None:
        for text in texts:
            json.dumps(json.loads(text))

    mine, theirs, ratio = alternate(ours, floor, 3 if smoke else 7)
    megabytes = sum(map(len, texts)) / 1e6
    return [
        at_most(f"core: plan {len(texts)} specs ({megabytes:.0f} MB)", mine, theirs, ratio, 1.5)
    ]
