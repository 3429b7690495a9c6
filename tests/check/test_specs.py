"""Finding specs, sweeps and spec-holding strings in a document, and engine changes as
findings."""

from __future__ import annotations

import json

import pytest
from strategies import MIGRATION

from wbmigrate.check.model import Rule
from wbmigrate.check.specs import check_spec, check_sweep, config_keys, may_embed
from wbmigrate.check.targets import Targets, targets_for
from wbmigrate.edit.edits import RenameKey, Set
from wbmigrate.engine.model import Mode, Options
from wbmigrate.files import EXPORT_FORMAT, MAX_DEPTH, SWEEP, TEXT, TooDeep, find

TARGETS = Targets(MIGRATION, Options())
REPORT = {"blocks": []}
WORKSPACE = {"section": {}}
TRIGGER = {"event": {}, "action": {}}
SWEEP_CONFIG = {"method": "grid", "parameters": {}}


def test_specs_are_found_wherever_they_sit_and_nothing_inside_them_is_looked_at():
    document = {
        "views": [{"name": "v", "spec": REPORT}, {"name": "w", "spec": WORKSPACE}],
        "triggers": [TRIGGER, {"name": "not a spec"}],
        "sweep": {**SWEEP_CONFIG, "parameters": {"inner": {"blocks": []}}},
        "nested": {"deeper": [[{"section": {"blocks": []}}]]},
    }
    assert find(document) == [
        (("views", 0, "spec"), "report"),
        (("views", 1, "spec"), "workspace"),
        (("triggers", 0), "automation"),
        (("sweep",), SWEEP),
        (("nested", "deeper", 0, 0), "workspace"),
    ]


def test_an_export_file_says_its_kind_and_its_metadata_is_walked_apart():
    document = {"wbmigrate": EXPORT_FORMAT, "kind": "report", "spec": {"blocks": []}, "x": TRIGGER}
    assert find(document) == [(("spec",), "report"), (("x",), "automation")]


def test_only_strings_that_look_like_a_spec_with_an_old_name_are_parsed():
    test = may_embed(TARGETS)
    assert test(json.dumps({"blocks": ["off_policy/mean"]}))
    assert not test(json.dumps({"blocks": ["accuracy"]}))  # no old name: nothing to find
    assert not test(json.dumps({"other": ["off_policy/mean"]}))  # no spec's shape
    assert not test("the blocks of off_policy/mean")  # not JSON text
    document = {"a": json.dumps({"blocks": ["off_policy/mean"]}), "b": "off_policy/mean"}
    assert find(document, test) == [(("a",), TEXT)]


def test_a_document_deeper_than_the_walk_reads_is_refused():
    document: object = "x"
    for _ in range(MAX_DEPTH + 1):
        document = [document]
    with pytest.raises(TooDeep):
        find(document)


def test_changes_become_findings_rooted_where_the_spec_sits():
    feed = {"runFeed": {"columnVisible": {"off_policy/mean": True}}}
    spec = {"section": {"runSets": [feed], "panelBankConfig": {"sections": [{"panels": []}]}}}
    pending, notes = check_spec(spec, ("views", 0, "spec"), "workspace", "f", TARGETS, 3)
    (finding,) = pending
    feed = ("views", 0, "spec", "section", "runSets", 0, "runFeed")
    assert finding.path == (*feed, "columnVisible", "off_policy/mean")
    assert finding.key  # a map key: the finding points at the key, not at `true`
    assert finding.unit == 3
    assert all(e.path[:3] == ("views", 0, "spec") for e in finding.edits)
    assert notes  # the migration note, made only with the spec's fixes


SECTION = ("section", "panelBankConfig", "sections", 0, "panels", 0)


def panel_spec(panel: dict) -> dict:
    return {"section": {"panelBankConfig": {"sections": [{"panels": [panel]}]}}}


@pytest.mark.parametrize(
    ("shown", "path"),
    [
        ({"metrics": ["off_policy/mean"]}, (*SECTION, "config", "metrics", 0)),  # beside it
        (
            {"columns": [{"displayName": "Max", "accessor": "summary:off_policy/max"}]},
            (*SECTION, "config", "columns", 0, "accessor"),  # the name in the column object
        ),
        (
            {"chartTitle": "Gauges", "metrics": ["dispatcher/off_policy/max"]},
            (*SECTION, "config", "metrics", 0),  # a deleted panel: at its gone metric
        ),
    ],
    ids=["key-list", "column-object", "deleted-panel"],
)
def test_a_change_points_at_the_old_name(shown, path):
    view = "Parallel Coordinates Plot" if "columns" in shown else "Run History Line Plot"
    spec = panel_spec({"layout": {"x": 0}, "viewType": view, "config": shown})
    pending, _ = check_spec(spec, (), "workspace", "f", TARGETS, 0)
    (finding,) = pending
    assert (finding.path, finding.key, finding.name) == (path, False, None)


def test_a_disabled_alert_points_at_the_gone_metric_in_its_filter():
    metric = {"threshold_filter": {"name": "dispatcher/off_policy/max", "threshold": 8}}
    spec = {
        "name": "stale",
        "description": "",
        "enabled": True,
        "event": {
            "eventType": "RUN_METRIC",
            "filter": json.dumps({"run_filter": "{}", "run_metric_filter": metric}),
        },
        "action": {"title": "t"},
    }
    (finding,), _ = check_spec(spec, (), "automation", "f", TARGETS, 0)
    assert finding.rule is Rule.REMOVED_METRIC
    assert (finding.path, finding.name) == (("event", "filter"), "dispatcher/off_policy/max")
    assert {e.path for e in finding.edits} == {("enabled",), ("description",)}


def test_a_spec_the_engine_cannot_read_is_one_needs_review_at_its_start(monkeypatch):
    def failing(*args: object, **kwargs: object) -> None:
        raise TypeError("unhashable type: 'dict'")

    monkeypatch.setattr("wbmigrate.check.specs.rewrite", failing)
    (finding,), notes = check_spec({"blocks": []}, ("spec",), "report", "f", TARGETS, 0)
    assert notes is None
    assert finding.rule is Rule.NEEDS_REVIEW
    assert "TypeError: unhashable type: 'dict'" in finding.message
    assert (finding.key, finding.whole, finding.edits) == (True, False, [])


def test_config_keys_are_looked_for_outside_specs_only():
    document = {
        "orchestrator": {"max_off_policy_steps": 8},
        "spec": {"orchestrator": {"max_off_policy_steps": 8}},
    }
    (found,), _ = config_keys(document, TARGETS, {("spec",)})
    assert found.path == ("orchestrator", "max_off_policy_steps")
    assert found.rule is Rule.RENAMED_CONFIG_KEY


@pytest.mark.parametrize(
    ("document", "renamed"),
    [
        ({"orchestrator": {"max_off_policy_steps": 8}}, "max_staleness"),
        ({"orchestrator.max_off_policy_steps": 8}, "orchestrator.max_staleness"),  # flattened
        ({"max_off_policy_steps": 8}, "max_staleness"),  # a standalone config
    ],
)
def test_a_config_key_keeps_the_parents_it_spells(document, renamed):
    (found,), _ = config_keys(document, TARGETS, set())
    (edit,) = found.edits
    assert edit.new_key == renamed


@pytest.mark.parametrize("mode", [Mode.DUAL, Mode.REPLACE])
def test_a_removed_key_beside_live_keys_is_kept_in_dual_mode_only(mode):
    spec = {
        "blocks": [
            {
                "type": "panel-grid",
                "metadata": {
                    "panelBankSectionConfig": {
                        "panels": [
                            {
                                "viewType": "Run History Line Plot",
                                "config": {"metrics": ["loss", "dispatcher/off_policy/max"]},
                            }
                        ]
                    }
                },
            }
        ]
    }
    targets = targets_for(MIGRATION, Options(mode=mode))
    pending, _ = check_spec(spec, (), "report", "f", targets, 0)
    removed = [p for p in pending if p.rule is Rule.REMOVED_METRIC]
    assert len(removed) == (0 if mode is Mode.DUAL else 1)


# --- W&B sweep configs: the metric a sweep optimises, and the config keys it sweeps


def sweep(metric: str, **parameters: object) -> dict[str, object]:
    return {
        "method": "bayes",
        "metric": {"name": metric, "goal": "minimize"},
        "parameters": parameters,
    }


@pytest.mark.parametrize("mode", [Mode.DUAL, Mode.REPLACE])
def test_the_metric_moves_to_the_new_key_in_both_modes(mode):
    targets = targets_for(MIGRATION, Options(mode=mode))
    (found,) = check_sweep(sweep("off_policy/mean"), ("s",), targets)
    assert found.rule is Rule.RENAMED_METRIC
    assert found.edits == [Set(("s", "metric", "name"), "staleness/rollout/mean")]
    assert "runs it already made keep the old key" in found.message


def test_a_removed_metric_moves_to_its_equivalent_or_is_left_for_review():
    targets = targets_for(MIGRATION, Options())
    (equivalent,) = check_sweep(sweep("off_policy/token/max"), (), targets)
    assert equivalent.rule is Rule.REMOVED_METRIC
    assert equivalent.edits == [Set(("metric", "name"), "staleness/rollout/max")]
    (gone,) = check_sweep(sweep("dispatcher/off_policy/max"), (), targets)
    assert gone.rule is Rule.NEEDS_REVIEW
    assert gone.edits == []


def test_swept_config_keys_are_renamed_in_every_spelling():
    nested = {"parameters": {"max_off_policy_steps": {"values": [1]}, "batch_size": {"value": 2}}}
    config = sweep(
        "loss",
        max_off_policy_steps={"values": [8]},
        **{"orchestrator.max_off_policy_steps": {"values": [8]}},
        orchestrator=nested,
        max_off_policy_steps_hint={"value": 1},
    )
    found = check_sweep(config, (), targets_for(MIGRATION, Options()))
    assert [f.edits for f in found] == [
        [RenameKey(("parameters", "max_off_policy_steps"), "max_staleness")],
        [
            RenameKey(
                ("parameters", "orchestrator.max_off_policy_steps"), "orchestrator.max_staleness"
            )
        ],
        [
            RenameKey(
                ("parameters", "orchestrator", "parameters", "max_off_policy_steps"),
                "max_staleness",
            )
        ],
    ]
    assert all(f.key and f.rule is Rule.RENAMED_CONFIG_KEY for f in found)


def test_a_key_whose_new_name_is_swept_too_is_not_renamed_into_it():
    config = sweep("loss", max_off_policy_steps={"value": 1}, max_staleness={"value": 1})
    (found,) = check_sweep(config, (), targets_for(MIGRATION, Options()))
    assert found.edits == []
    assert "max_staleness is set too" in found.message
