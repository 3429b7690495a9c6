"""The data-loss guard: a write may only lose what the plan removes on purpose."""

from __future__ import annotations

import json

import pytest
from helpers import FIXTURES
from hypothesis import HealthCheck, given, settings
from strategies import MODES, SPECS

from wbmigrate import find_mapping
from wbmigrate.edit.edits import Delete, Set
from wbmigrate.edit.json import splice
from wbmigrate.engine.model import Mode, Options
from wbmigrate.guard import DataLossError, check_write, parts
from wbmigrate.rewrite import rewrite_text

MIGRATION = find_mapping("prime-rl").migration()
REPORT = FIXTURES / "demo-project" / "reports" / "async-health.json"
ALERT = FIXTURES / "demo-project" / "automations" / "staleness-high.json"


def test_parts_counts_panels_series_filters_and_conditions():
    # five panels plotting 2+2+2+1+2 metrics; two run-set filters
    assert parts(json.loads(REPORT.read_text())) == {"panels": 5, "series": 9, "filters": 2}
    # one run filter, one threshold
    assert parts(json.loads(ALERT.read_text())) == {"conditions": 2}


@pytest.mark.parametrize("mode", [Mode.DUAL, Mode.REPLACE])
@pytest.mark.parametrize("path", sorted((FIXTURES / "demo-project").rglob("*.json")), ids=str)
def test_every_demo_rewrite_passes_the_guard(path, mode):
    text = path.read_text()
    result, new_text = rewrite_text(text, MIGRATION, options=Options(mode=mode))
    check_write(result.original, list(result.edits), new_text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SPECS, MODES)
def test_the_engine_never_trips_the_guard(spec, mode):
    result, new_text = rewrite_text(json.dumps(spec), MIGRATION, options=Options(mode=mode))
    check_write(result.original, list(result.edits), new_text)


def test_a_deleted_panel_is_fine_when_planned_and_refused_when_not():
    report = json.loads(REPORT.read_text())
    grid = next(i for i, b in enumerate(report["blocks"]) if b.get("type") == "panel-grid")
    panels = ("blocks", grid, "metadata", "panelBankSectionConfig", "panels")
    planned = [Delete((*panels, 0))]
    check_write(report, planned, splice(REPORT.read_text(), planned))
    # the same loss made by a Set (say, a bug that rebuilt the list without a panel)
    shorter = report["blocks"][grid]["metadata"]["panelBankSectionConfig"]["panels"][1:]
    unplanned = [Set(panels, shorter)]
    with pytest.raises(DataLossError, match=r"lose 1 panels, \d+ series that the plan does not"):
        check_write(report, unplanned, splice(REPORT.read_text(), unplanned))


def test_text_that_is_not_the_planned_spec_is_refused():
    text = REPORT.read_text()
    result, new_text = rewrite_text(text, MIGRATION)
    broken = new_text.replace('"staleness/rollout/mean"', '"staleness/rollout/meam"', 1)
    with pytest.raises(DataLossError, match="not the planned spec"):
        check_write(result.original, list(result.edits), broken)


def test_a_lost_alert_condition_is_refused():
    trigger = json.loads(ALERT.read_text())
    inner = json.loads(trigger["event"]["filter"])
    inner["run_metric_filter"] = {}
    edits = [Set(("event", "filter"), json.dumps(inner))]
    with pytest.raises(DataLossError, match="conditions"):
        check_write(trigger, edits, splice(ALERT.read_text(), edits))
