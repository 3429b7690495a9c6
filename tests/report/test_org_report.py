"""`plan ENTITY`'s report: server text (run names, errors) in its Markdown stays text."""

from __future__ import annotations

from helpers import MIGRATION, rendered_markdown

from wbmigrate.engine.history import History, RunRef
from wbmigrate.engine.model import Options
from wbmigrate.live.org import ProjectPlan, Result
from wbmigrate.live.project import Counts
from wbmigrate.plan import Tally
from wbmigrate.report import org as report

HOSTILE = "[click](https://evil.example/a) ![p](https://evil.example/p.png) \\| \\[x](//e.x)"


def test_markdown_makes_no_link_image_or_cell_of_server_text():
    run = RunRef(HOSTILE, "r1", "2026-09-01T10:00:00Z")
    options = Options(history=History(frozenset(), 2, None, run, run))
    results = [
        Result("team/a", ProjectPlan("team/a", options, Counts(), Tally(), [])),
        Result("team/b", error=HOSTILE),
    ]
    markdown = "".join(report.markdown_chunks(MIGRATION, Options(), results))
    links, images, cells = rendered_markdown(markdown)
    assert (links, images, set(cells)) == ([], 0, {len(report.COLUMNS)})
