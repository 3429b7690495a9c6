"""A config key the mapping removes, in a run set or a panel: left as it is in both modes
(never deleted), with a warning that runs after the step have no value for it; `verify` says
nothing of it."""

from __future__ import annotations

import json

import pytest
from helpers import FIXTURES

from wbmigrate.edit.edits import materialize
from wbmigrate.engine.model import Mode, NoteKind, Options
from wbmigrate.engine.panels import walk_panel
from wbmigrate.engine.runsets import walk_runset
from wbmigrate.engine.walk import Walk
from wbmigrate.mapping.load import load_mapping
from wbmigrate.plan import Source, plan_one
from wbmigrate.verify import verify_one

MAPPING = load_mapping(FIXTURES / "mappings/valid/config-removed.yaml")
MIGRATION = MAPPING.migration()
CASES = FIXTURES / "cases"
WARNING = (
    "{} was removed in step 2026.05.25 (#2631): runs after it have no value. The async barrier "
    "is hardcoded; there is no bound to set."
)


def runset(name: str) -> dict:
    """A run set filtered, grouped and sorted by the config key `name`, with it as a column."""
    key = {"section": "config", "name": name}
    column = f"config:{name.replace('.', '.value.', 1)}"
    return {
        "name": "Config",
        "filters": {"filterFormat": "filterV2", "filters": [{"key": key, "op": ">=", "value": 4}]},
        "grouping": [key],
        "sort": {"keys": [{"key": key, "ascending": True}]},
        "runFeed": {"columnVisible": {column: True}, "columnOrder": [column]},
    }


@pytest.mark.parametrize("mode", [Mode.DUAL, Mode.REPLACE])
@pytest.mark.parametrize("name", ["orchestrator.max_async_level", "orchestrator.async_level"])
def test_a_removed_config_key_stays_with_a_warning_at_each_place(name, mode):
    before = runset(name)
    w = Walk(MIGRATION, Options(mode=mode))
    walk_runset(w, (), before)
    assert (materialize(before, w.edits), w.changes) == (before, [])
    warned = [(n.field, n.message) for n in w.notes if n.kind is NoteKind.WARNING]
    column = f"config:{name.replace('.', '.value.', 1)}"
    assert warned == [
        ("filters[0]", WARNING.format(name)),
        ("grouping[0]", WARNING.format(name)),
        ("sort.keys[0]", WARNING.format(name)),
        (f"runFeed.columnVisible[{json.dumps(column)}]", WARNING.format(name)),
        ("runFeed.columnOrder[0]", WARNING.format(name)),
    ]
    assert len(w.notes) == len(warned)


def test_before_the_removal_the_key_is_renamed():
    w = Walk(MAPPING.migration(to="2025.11.01"), Options(mode=Mode.REPLACE))
    before = runset("orchestrator.async_level")
    walk_runset(w, (), before)
    assert materialize(before, w.edits)["grouping"][0]["name"] == "orchestrator.max_async_level"


def test_a_panels_removed_config_key_stays_with_a_warning():
    panel = {
        "viewType": "Run History Line Plot",
        "config": {"metrics": ["loss"], "groupBy": "orchestrator.max_async_level"},
    }
    w = Walk(MIGRATION, Options())
    walk_panel(w, ("panels", 0), panel)
    assert w.edits == []
    assert [n.message for n in w.notes] == [WARNING.format("orchestrator.max_async_level")]


def test_plan_warns_and_verify_says_nothing_new():
    spec = json.loads((CASES / "report/runset-config-keys/before.json").read_text())
    text = json.dumps(spec).replace("max_off_policy_steps", "max_async_level")
    source = Source("report", "r.json", text)
    planned = plan_one(source, MIGRATION, Options())
    assert planned.result is not None
    assert not planned.result.changed
    assert any("runs after it have no value" in n.message for n in planned.result.notes)
    assert verify_one(source, MIGRATION, Options()).findings == ()
